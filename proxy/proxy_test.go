package proxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
)

func TestParse(t *testing.T) {
	for _, c := range []struct{ in, want, redacted string }{
		{"127.0.0.1:8080", "http://127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"HTTP://Proxy.Example:3128/", "http://proxy.example:3128", "http://proxy.example:3128"},
		{"https://u:p@h.example:443", "https://u:p@h.example:443", "https://***@h.example:443"},
		{"socks5://bob:pw@10.0.0.1:1080", "socks5://bob:pw@10.0.0.1:1080", "socks5://***@10.0.0.1:1080"},
		{"[::1]:8080", "http://[::1]:8080", "http://[::1]:8080"},
	} {
		p, err := Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if p.URL().String() != c.want || p.Redacted() != c.redacted {
			t.Errorf("Parse(%q) = %s / %s, want %s / %s", c.in, p.URL(), p.Redacted(), c.want, c.redacted)
		}
	}
	for _, in := range []string{"", "ftp://h:21", "h.example", "h:0", "h:70000", "http://h:80/path",
		"http://h:80?q=1", "socks4://h:1080", "http://:pw@h:80", "http://:80"} {
		if _, err := Parse(in); !errors.Is(err, ErrBadProxy) {
			t.Errorf("Parse(%q) = %v, want ErrBadProxy", in, err)
		}
	}
}

// TestProxy_NoCredentials: the credentials are part of the identity, and
// no printed or encoded form of a Proxy shows them.
func TestProxy_NoCredentials(t *testing.T) {
	a := mustParse(t, "http://alice:hunter2@10.1.1.1:3128")
	b := mustParse(t, "http://alice:other@10.1.1.1:3128")
	c := mustParse(t, "http://10.1.1.1:3128")
	if a.ID() == b.ID() || a.ID() == c.ID() {
		t.Errorf("IDs %s %s %s: credentials must make another identity", a.ID(), b.ID(), c.ID())
	}
	js, _ := json.Marshal(map[string]any{"p": a})
	forms := []string{a.String(), fmt.Sprint(a), fmt.Sprintf("%v %+v %#v %s", a, a, a, a), string(js),
		string(a.ID())}
	for _, f := range forms {
		if strings.Contains(f, "hunter2") || strings.Contains(f, "alice") {
			t.Errorf("%q shows credentials", f)
		}
	}
	if _, err := Parse("http://alice:hunter2@h:99999"); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Parse error %v shows credentials", err)
	}
}

func TestParseSource(t *testing.T) {
	in := "# list\n\n127.0.0.1:1\nsocks5://127.0.0.1:2 # inline comment\njunk line\n127.0.0.1:1\nhttp://x:0\n"
	ps, st, err := ParseSource(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || st.Proxies != 3 || st.Comments != 1 || st.Junk != 2 {
		t.Errorf("got %d proxies, stats %+v; want 2 distinct, 3 lines, 1 comment, 2 junk", len(ps), st)
	}
	_, stats, err := ReadSources(ctxT(t), nil, []string{"/nonexistent/proxies.txt", "https://u:pw@127.0.0.1:1/list?token=t0k3n"})
	if err == nil || stats[0].Err == "" || stats[1].Err == "" || strings.Contains(err.Error(), "pw") ||
		strings.Contains(err.Error(), "t0k3n") || stats[1].Source != "https://u:xxxxx@127.0.0.1:1/list?token=xxxxx" {
		t.Errorf("ReadSources of unreadable sources = %v, %+v; want both errors, credentials redacted", err, stats)
	}
}

func TestOptions_Validate(t *testing.T) {
	if err := DefaultOptions().Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	if err := DefaultPoolOptions().Validate(); err != nil {
		t.Errorf("pool defaults: %v", err)
	}
	for field, edit := range map[string]func(*Options){
		"Concurrency":  func(o *Options) { o.Concurrency = 0 },
		"MinSize":      func(o *Options) { o.MinSize = o.MaxSize + 1 },
		"Lease":        func(o *Options) { o.Lease = o.CheckTimeout },
		"CheckURL":     func(o *Options) { o.CheckURL = "ftp://x" },
		"MinAnonymity": func(o *Options) { o.MinAnonymity = "secret" },
		"BackoffMax":   func(o *Options) { o.BackoffMax = time.Second },
		"Recheck":      func(o *Options) { o.Recheck = 0 },
	} {
		o := DefaultOptions()
		edit(&o)
		var fe *cluster.FieldError
		if err := o.Validate(); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: Validate = %v, want a FieldError naming it", field, err)
		}
	}
}

func TestStatusOutcome(t *testing.T) {
	for status, want := range map[int]Kind{200: KindOK, 301: KindOK, 403: KindBanned, 429: KindBanned,
		407: KindProxyFault, 404: KindTargetFault, 500: KindTargetFault, 503: KindTargetFault} {
		if got := StatusOutcome(status, time.Millisecond).Kind; got != want {
			t.Errorf("StatusOutcome(%d) = %s, want %s", status, got, want)
		}
	}
}
