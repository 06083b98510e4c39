package jobspec

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestParse_notify: a notify list parses as written, an entry without
// events wants them all, and it survives the JSON a submission stores.
func TestParse_notify(t *testing.T) {
	spec, err := Parse(strings.NewReader(minimalJob + `notify:
  - {url: "https://hooks.example.com/crawl", events: [finished, failed]}
  - {url: "http://127.0.0.1:9000/all"}
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.Notify) != 2 || spec.Notify[0].URL != "https://hooks.example.com/crawl" {
		t.Fatalf("notify = %+v", spec.Notify)
	}
	first, all := spec.Notify[0], spec.Notify[1]
	if !first.Wants(EventFailed) || first.Wants(EventCancelled) || first.Wants(EventPaused) {
		t.Errorf("%+v: wants failed and not cancelled or paused", first)
	}
	for _, e := range Events {
		if !all.Wants(e) {
			t.Errorf("an entry without events does not want %s", e)
		}
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(raw)
	if err != nil || len(back.Notify) != 2 || back.Notify[0].Events[1] != EventFailed {
		t.Fatalf("decoded %s as %+v, %v", raw, back, err)
	}
}

// TestParse_notifyRefused: every bad entry is refused with an error that
// names the entry's field and what is wrong.
func TestParse_notifyRefused(t *testing.T) {
	for name, tc := range map[string]struct{ notify, want string }{
		"no url":         {`[{events: [finished]}]`, "notify[0].url: a URL is required"},
		"not a url":      {`[{url: "http://a b/%zz"}]`, "notify[0].url:"},
		"ftp":            {`[{url: "ftp://example.com/x"}]`, `notify[0].url: "ftp://example.com/x": the scheme "ftp" is not http or https`},
		"file":           {`[{url: "file:///etc/passwd"}]`, `the scheme "file" is not http or https`},
		"no scheme":      {`[{url: "example.com/hook"}]`, `the scheme "" is not http or https`},
		"no host":        {`[{url: "https:///hook"}]`, "has no host"},
		"credentials":    {`[{url: "https://me:secret@example.com/h"}]`, "holds credentials"},
		"unknown event":  {`[{url: "https://example.com/h", events: [finished, done]}]`, `notify[0].events[1]: "done" is not one of finished, failed, cancelled, paused`},
		"event twice":    {`[{url: "https://example.com/h", events: [paused, paused]}]`, `notify[0].events[1]: "paused" is given twice`},
		"url twice":      {`[{url: "https://example.com/h"}, {url: "https://example.com/h"}]`, "notify[1].url:"},
		"unknown field":  {`[{url: "https://example.com/h", secret: x}]`, "secret"},
		"too many":       {"[" + strings.Repeat(`{url: "https://example.com/h"},`, 11) + "]", "notify: 11 webhooks is more than 10"},
		"not a list":     {`{url: "https://example.com/h"}`, "notify"},
		"second entry":   {`[{url: "https://example.com/a"}, {url: "gopher://example.com/"}]`, "notify[1].url"},
		"events not str": {`[{url: "https://example.com/a", events: finished}]`, "events"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(minimalJob + "notify: " + tc.notify + "\n"))
			if err == nil {
				t.Fatalf("notify: %s was accepted", tc.notify)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("notify: %s: error %q does not say %q", tc.notify, err, tc.want)
			}
			if strings.Contains(err.Error(), "secret@") {
				t.Errorf("error %q shows the URL's password", err)
			}
		})
	}
}
