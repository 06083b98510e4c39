package cluster

import (
	"encoding/json"
	"fmt"

	"github.com/crawler-dev/crawler/jobspec"
)

// Task is one detail page to fetch, as it travels on a slave's queue. The
// master routes it, a slave takes it, fetches it and acknowledges it.
type Task struct {
	// URL is the detail page's canonical URL.
	URL string `json:"u"`
	// FP is the hex request fingerprint: the dedup key and the item's identity.
	FP string `json:"f"`
	// Job is the job's name.
	Job string `json:"j"`
	// Referer is the list page the link was found on.
	Referer string `json:"r,omitempty"`
	// Round is the crawl round (recrawl number) that discovered the task.
	Round int64 `json:"n,omitempty"`
	// Retry marks a task re-enqueued by client retry-failed: it is already
	// counted as failed, and moves to stored if it succeeds now.
	Retry bool `json:"x,omitempty"`
	// Kind is the item kind of the page ("" in tasks of the short form,
	// and those written before kinds: the detail kind). See ItemKind.
	Kind string `json:"k,omitempty"`
	// Priority is the page's priority (its kind's or its link rule's):
	// the band of the slave queue it waits in (JobKeys.Band). Only a
	// priority other than 0 shows in the wire form.
	Priority int `json:"p,omitempty"`
}

// ItemKind is the task's page kind, detail when it has none.
func (t Task) ItemKind() string {
	if t.Kind == "" {
		return jobspec.KindDetail
	}
	return t.Kind
}

// TaskRetryMarker is how a task with Retry set shows in its wire form: a
// script tells such tasks apart by it without decoding them.
const TaskRetryMarker = `"x":true`

// TaskPriorityMarker is what stands before a task's priority in its wire
// form (when it is not 0: json.Marshal writes it after the url,
// fingerprint and job, so after a comma): a script finds a task's band by
// it without decoding the task. Inside a JSON string a quote is escaped,
// so the marker cannot occur there.
const TaskPriorityMarker = `,"p":`

// Encode returns the task's wire form.
func (t Task) Encode() string {
	b, _ := json.Marshal(t) // a struct of strings and ints always marshals
	return string(b)
}

// DecodeTask parses a task's wire form.
func DecodeTask(s string) (Task, error) {
	t, ok := decodeTaskFast(s) // the form Encode writes, read without reflection
	if !ok {
		var slow Task // apart from t, which would go to the heap with it
		if err := json.Unmarshal([]byte(s), &slow); err != nil {
			return Task{}, fmt.Errorf("decode task: %w", err)
		}
		t = slow
	}
	if t.URL == "" || t.FP == "" || t.Job == "" {
		return Task{}, fmt.Errorf("decode task: missing url, fingerprint or job in %q", s)
	}
	return t, nil
}

// ListPage is one list page on a job's frontier.
type ListPage struct {
	// URL is the list page's canonical URL.
	URL string `json:"u"`
	// Depth is its BFS depth; seeds are depth 0.
	Depth int `json:"d"`
	// Kind is its page kind ("" is start, as in list pages written before
	// kinds). See PageKind.
	Kind string `json:"k,omitempty"`
	// Sitemap, when not 0, makes the entry the walk of the job's sitemaps
	// entry Sitemap-1 (URL is its sitemap, or for url: robots a seed
	// whose host's robots.txt names them), not a page to fetch.
	Sitemap int `json:"s,omitempty"`
}

// PageKind is the list page's kind, start when it has none.
func (p ListPage) PageKind() string {
	if p.Kind == "" {
		return jobspec.KindStart
	}
	return p.Kind
}

// Encode returns the list page's wire form.
func (p ListPage) Encode() string {
	b, _ := json.Marshal(p)
	return string(b)
}

// DecodeListPage parses a list page's wire form.
func DecodeListPage(s string) (ListPage, error) {
	var p ListPage
	if err := json.Unmarshal([]byte(s), &p); err != nil || p.URL == "" {
		return ListPage{}, fmt.Errorf("decode list page %q: %v", s, err)
	}
	return p, nil
}
