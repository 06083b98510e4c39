package jobspec

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Webhook is one entry of a job's notify list: the master POSTs a signed
// JSON event to URL whenever the job makes one of the transitions Events
// names (docs/webhooks.md).
type Webhook struct {
	// URL receives the events: http or https, no user information.
	URL string `yaml:"url" json:"url"`
	// Events are the transitions sent (Event* constants); empty means
	// all of them.
	Events []string `yaml:"events" json:"events,omitempty"`
}

// The events a webhook may ask for: the transitions of a job (and of each
// round of a recurring one) that the master announces.
const (
	// EventFinished: a round ended with at least one item stored.
	EventFinished = "finished"
	// EventFailed: a round ended with no item stored.
	EventFailed = "failed"
	// EventCancelled: client cancel (or the API) stopped the job.
	EventCancelled = "cancelled"
	// EventPaused: the job was paused.
	EventPaused = "paused"
)

// Events lists every event a webhook may ask for, in the order the
// documentation gives them.
var Events = []string{EventFinished, EventFailed, EventCancelled, EventPaused}

// MaxWebhooks bounds a job's notify list.
const MaxWebhooks = 10

// Wants reports whether the webhook asked for event.
func (w Webhook) Wants(event string) bool {
	return len(w.Events) == 0 || slices.Contains(w.Events, event)
}

// validateNotify checks the notify list: http(s) URLs with a host and no
// credentials, known events, no entry twice.
func (s *Job) validateNotify() error {
	if len(s.Notify) > MaxWebhooks {
		return fmt.Errorf("notify: %d webhooks is more than %d", len(s.Notify), MaxWebhooks)
	}
	seen := map[string]bool{}
	for i, w := range s.Notify {
		path := fmt.Sprintf("notify[%d]", i)
		if err := checkWebhookURL(w.URL); err != nil {
			return fmt.Errorf("%s.url: %w", path, err)
		}
		if seen[w.URL] {
			return fmt.Errorf("%s.url: %q is given twice; list its events in one entry", path, w.URL)
		}
		seen[w.URL] = true
		if err := checkEvents(path, w.Events); err != nil {
			return err
		}
	}
	return nil
}

// checkWebhookURL refuses what a webhook cannot be sent to, or should not
// carry: other schemes, no host, a password in the URL (it would be shown
// by client status and logged).
func checkWebhookURL(raw string) error {
	if raw == "" {
		return fmt.Errorf("a URL is required")
	}
	if len(raw) > MaxURLBytes {
		return fmt.Errorf("a URL of %d bytes is longer than %d", len(raw), MaxURLBytes)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("%q is not a URL: %w", raw, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%q: the scheme %q is not http or https", raw, u.Scheme)
	case u.Hostname() == "":
		return fmt.Errorf("%q has no host", raw)
	case u.User != nil:
		return fmt.Errorf("%q holds credentials; the events are signed with the master's --webhook-secret-file instead", u.Redacted())
	case u.Fragment != "":
		return fmt.Errorf("%q has a fragment, which is never sent", raw)
	}
	return nil
}

func checkEvents(path string, events []string) error {
	seen := map[string]bool{}
	for j, e := range events {
		switch {
		case !slices.Contains(Events, e):
			return fmt.Errorf("%s.events[%d]: %q is not one of %s", path, j, e, strings.Join(Events, ", "))
		case seen[e]:
			return fmt.Errorf("%s.events[%d]: %q is given twice", path, j, e)
		}
		seen[e] = true
	}
	return nil
}
