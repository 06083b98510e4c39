package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
)

// gatedShop is a loopback shop of n products built by script: each
// product's title comes from /api/ID.json, which is held until open is
// closed. loading receives once tabs of those requests are held, so the
// slave's browser has renderings in progress.
type gatedShop struct {
	*httptest.Server
	open    chan struct{}
	loading chan struct{}
}

func newGatedShop(t *testing.T, n, tabs int) *gatedShop {
	t.Helper()
	s := &gatedShop{open: make(chan struct{}), loading: make(chan struct{}, 1)}
	var mu sync.Mutex
	held := 0
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page := func(body string) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte("<!doctype html><html><body>" + body + "</body></html>"))
		}
		switch {
		case r.URL.Path == "/":
			var links strings.Builder
			for i := 1; i <= n; i++ {
				fmt.Fprintf(&links, `<a class="p" href="/p/%d">%d</a>`, i, i)
			}
			page(links.String())
		case strings.HasPrefix(r.URL.Path, "/p/"):
			id := strings.TrimPrefix(r.URL.Path, "/p/")
			page(`<h1></h1><script>
fetch("/api/` + id + `.json").then(r => r.json()).then(p => {
  document.querySelector("h1").textContent = p.title;
  document.body.classList.add("ready");
});</script>`)
		case strings.HasPrefix(r.URL.Path, "/api/"):
			mu.Lock()
			held++
			if held == tabs {
				s.loading <- struct{}{}
			}
			mu.Unlock()
			select {
			case <-s.open:
			case <-r.Context().Done():
				return
			}
			id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/api/"), ".json")
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"title": "Lamp ` + id + `"}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(func() {
		select {
		case <-s.open:
		default:
			close(s.open)
		}
		s.Close()
	})
	return s
}

// browserOf is the pid of the Chromium that process pid started (a child
// of it whose command line names chromium), 0 when none runs.
func browserOf(t *testing.T, pid int) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		_, rest, ok := bytes.Cut(stat, []byte(") "))
		f := strings.Fields(string(rest))
		if !ok || len(f) < 2 || f[0] == "Z" || f[1] != strconv.Itoa(pid) {
			continue
		}
		if cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); bytes.Contains(cmd, []byte("chromium")) {
			return p
		}
	}
	return 0
}

// TestCluster_RenderBrowserKilled: the slave's browser is killed (SIGKILL)
// while it renders products; the renderings it was running are retried
// in a new browser, so every product ends stored, none failed, and the
// counters close.
func TestCluster_RenderBrowserKilled(t *testing.T) {
	t.Parallel()
	const products, tabs = 8, 2
	env := newClusterEnv(t)
	shop := newGatedShop(t, products, tabs)
	job := writeSPAJob(t, shop.URL, "max_retries: 3\n", "    render_timeout: 60s\n")
	env.slaveArgs = []string{"--render-concurrency", strconv.Itoa(tabs)}
	env.startMaster(t, "master")
	slave := env.startSlave(t, 0)
	env.waitSlaves(t, 0)
	env.submit(t, "spa", job)

	select {
	case <-shop.loading:
	case <-time.After(3 * time.Minute):
		t.Fatalf("no product rendering reached its JSON; slave output:\n%s", tail(slave.out.String(), 4000))
	}
	var victim int
	testenv.Eventually(t, time.Minute, "the slave's chromium in /proc", func() bool {
		victim = browserOf(t, slave.cmd.Process.Pid)
		return victim != 0
	})
	if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "the killed browser reaped", func() bool {
		return browserOf(t, slave.cmd.Process.Pid) != victim
	})
	close(shop.open)

	st := env.wait(t, "spa", 4*time.Minute)
	items := env.results(t, "spa")
	got := map[string]string{}
	for _, it := range items {
		got[strings.TrimPrefix(it.URL, shop.URL)] = fmt.Sprint(it.Fields["title"])
	}
	for i := 1; i <= products; i++ {
		if want := fmt.Sprintf("Lamp %d", i); got[fmt.Sprintf("/p/%d", i)] != want {
			t.Errorf("/p/%d stored as %q, want %q", i, got[fmt.Sprintf("/p/%d", i)], want)
		}
	}
	if len(items) != products {
		t.Errorf("%d items stored, want %d", len(items), products)
	}
	if fails := env.failures(t, "spa"); len(fails) != 0 {
		t.Errorf("failures %+v; a browser death is a retry", fails)
	}
	c := st.Counters
	if c.Stored != products || c.Failed != 0 || c.Discovered != c.Settled() {
		t.Errorf("counters %+v: want %d stored, none failed, discovered = stored + failed + skipped + duplicates + cancelled", c, products)
	}
	if c.Rendered != products {
		t.Errorf("rendered = %d, want %d (the products stored; the start page is not rendered)", c.Rendered, products)
	}
	if c.Retries < 1 {
		t.Errorf("retries = %d; the renderings the kill ended were not retried", c.Retries)
	}
	if now := browserOf(t, slave.cmd.Process.Pid); now == 0 || now == victim {
		t.Errorf("the slave runs no new browser (pid %d, killed %d)", now, victim)
	}
}

// writeSPAJob writes the job of a gated shop at base: its start page's
// product links, each product rendered and stored once body.ready is set;
// jobExtra and productExtra are YAML lines added to the job and to the
// product kind.
func writeSPAJob(t *testing.T, base, jobExtra, productExtra string) string {
	t.Helper()
	job := filepath.Join(t.TempDir(), "spa.yaml")
	yaml := `name: spa
seeds: ["` + base + `/"]
allow_private_networks: true
per_host_rps: 100
` + jobExtra + `kinds:
  start:
    links: [{css: a.p, kind: product}]
  product:
    item: true
    render: true
` + productExtra + `    wait_for: {css: body.ready}
    fields:
      title: {css: h1, required: true}
`
	if err := os.WriteFile(job, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return job
}
