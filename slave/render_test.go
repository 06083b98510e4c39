package slave

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/membership"
	"github.com/crawler-dev/crawler/render"
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
			jk := runningJobSpec(t, ctx, rdb, keys, "spa", site.URL, func(s *cluster.JobSpec) {
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
