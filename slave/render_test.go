package slave

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/membership"
	"github.com/crawler-dev/crawler/render"
	"github.com/crawler-dev/crawler/statuspage/browsertest"
)

// TestSlave_parksRenderTasks: a task of a rendered kind that reaches a
// slave that cannot render it is parked on the job's render-wait list,
// neither failed nor counted as a delivery: at once by a slave without a
// browser (which never offered to render), and after the document's
// fetch by one whose browser is installed but does not start, which then
// takes its offer back from the node table.
func TestSlave_parksRenderTasks(t *testing.T) {
	cases := []struct {
		name    string
		browser string // "" for no renderer
	}{
		{"no renderer", ""},
		{"browser missing", "/nonexistent/chromium"},
		{"browser does not start", "/bin/false"}, // the document is fetched, then the task parked
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rdb, keys := testenv.Redis(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			t.Cleanup(cancel)
			site := page(t)
			jk := runningJobSpec(t, ctx, rdb, keys, "spa", site.URL, func(s *jobspec.Job) {
				on := true
				s.Render = &on
			}, "/p/1")
			deps := Deps{Redis: rdb, Keys: keys, Store: jsonlStore(t)}
			if c.browser != "" {
				ropts := render.DefaultOptions()
				ropts.Browser = c.browser
				rr, err := render.New(ropts, nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = rr.Close() })
				deps.Renderer = rr
			}
			runSlave(t, ctx, DefaultOptions(), deps)
			testenv.Eventually(t, 30*time.Second, "the task parked for a renderer", func() bool {
				return rdb.LLen(ctx, jk.RenderWait()).Val() == 1
			})
			stats := rdb.HGetAll(ctx, jk.Stats()).Val()
			attempts := rdb.HGetAll(ctx, jk.TaskAttempts()).Val()
			if stats[cluster.StatFailed] != "" || stats[cluster.StatStored] != "" || rdb.ZCard(ctx, jk.Inflight(0)).Val() != 0 {
				t.Errorf("stats %v, in flight %d; want nothing failed, stored or held", stats, rdb.ZCard(ctx, jk.Inflight(0)).Val())
			}
			for field := range attempts {
				if strings.HasPrefix(field, cluster.AttemptCountPrefix) {
					t.Errorf("attempts %v: the parked task's delivery was counted", attempts)
				}
			}
			reg, err := membership.New(rdb, keys, membership.Options{})
			if err != nil {
				t.Fatal(err)
			}
			testenv.Eventually(t, 30*time.Second, "slave 0 live, not offering to render", func() bool {
				table, err := reg.Snapshot(ctx)
				return err == nil && len(table.Nodes) == 1 && len(table.Renderers().Nodes) == 0
			})
		})
	}
}

// TestSlave_warnsRenderedFieldsEmpty: when a rendered kind's field comes
// out empty on most of its pages (the page fills it after it is read),
// the slave says so once, naming the kind, the field and wait_for.
func TestSlave_warnsRenderedFieldsEmpty(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<html><body><h1></h1><p class="when">later</p></body></html>`) // nothing fills the h1 in time
	}))
	t.Cleanup(site.Close)
	paths := []string{"/p/1", "/p/2", "/p/3", "/p/4", "/p/5", "/p/6"}
	runningJobSpec(t, ctx, rdb, keys, "spa", site.URL, func(s *jobspec.Job) {
		on := true
		s.Render = &on
		s.Fields = map[string]jobspec.FieldRule{"title": {CSS: "h1"}, "when": {CSS: ".when"}}
	}, paths...)
	ropts := render.DefaultOptions()
	ropts.Browser = browsertest.ChromiumPath(t)
	rr, err := render.New(ropts, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rr.Close() })
	core, logs := observer.New(zap.WarnLevel)
	runSlave(t, ctx, DefaultOptions(), Deps{Redis: rdb, Keys: keys, Store: jsonlStore(t), Renderer: rr, Logger: zap.New(core)})
	warned := func() []observer.LoggedEntry {
		return logs.FilterMessageSnippet("come out empty on most pages").All()
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("stats %v", rdb.HGetAll(ctx, keys.Job("spa").Stats()).Val())
			for _, e := range logs.All() {
				t.Logf("%s %v", e.Message, e.ContextMap())
			}
		}
	})
	testenv.Eventually(t, time.Minute, "the warning about the empty field", func() bool { return len(warned()) > 0 })
	testenv.Eventually(t, time.Minute, "every page stored", func() bool {
		return rdb.HGet(ctx, keys.Job("spa").Stats(), cluster.StatStored).Val() == strconv.Itoa(len(paths))
	})
	got := warned()
	if len(got) != 1 {
		t.Fatalf("warned %d times, want once per kind", len(got))
	}
	fields := got[0].ContextMap()
	if empty := fmt.Sprint(fields["empty"]); !strings.Contains(empty, "title") || strings.Contains(empty, "when") ||
		!strings.Contains(got[0].Message, "wait_for") {
		t.Errorf("warning %q %v: want the title field named, not when, and wait_for suggested", got[0].Message, fields)
	}
}
