package render

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/metrics"
	"github.com/crawler-dev/crawler/statuspage/browsertest"
)

// spaPage is a page whose title, price and links exist only once its
// script has run and fetched the product's JSON from the same server.
const spaPage = `<!doctype html><html><head><title>loading</title>
<script src="/app.js"></script></head>
<body><h1></h1><span class="price"></span><ul id="links"></ul>
<img src="/logo.png"></body></html>`

const spaScript = `document.addEventListener("DOMContentLoaded", async () => {
  const r = await fetch("/api/product.json");
  const p = await r.json();
  document.querySelector("h1").textContent = p.title;
  document.title = p.title;
  for (const l of p.related) {
    const a = document.createElement("a");
    a.href = l; a.className = "related"; a.textContent = l;
    document.getElementById("links").appendChild(a);
  }
  document.querySelector(".price").textContent = p.price;
});`

// site is a loopback site that records every path it is asked for.
type site struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
	hang  chan struct{} // closed at cleanup: /slow.js answers then
}

func newSite(t testing.TB) *site {
	t.Helper()
	s := &site{hang: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/spa", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, spaPage) })
	mux.HandleFunc("/app.js", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		io.WriteString(w, spaScript)
	})
	mux.HandleFunc("/api/product.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"title":"Rendered lamp","price":"$1,299.00","related":["/p/2","/p/3"]}`)
	})
	mux.HandleFunc("/slow.js", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-s.hang:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(404) })
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.Path)
		s.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { close(s.hang); s.Close() })
	return s
}

func (s *site) asked(path string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Contains(s.paths, path)
}

// page fetches the document at path as the downloader would, and returns
// it ready to render.
func (s *site) page(t *testing.T, path string, r jobspec.Rendering) Page {
	t.Helper()
	resp, err := http.Get(s.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return Page{URL: s.URL + path, Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Body: body,
		Rendering: r, AllowPrivate: true, UserAgent: "crawler-test/1.0"}
}

func newRenderer(t testing.TB) *Renderer {
	t.Helper()
	opts := DefaultOptions()
	opts.Browser = browsertest.ChromiumPath(t)
	r, err := New(opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func rendering(wait string) jobspec.Rendering {
	return jobspec.Rendering{WaitFor: jobspec.WaitFor{CSS: wait}, Timeout: 30 * time.Second, Block: jobspec.DefaultBlock}
}

// TestRender_ScriptBuiltPage: the title, price and links that only the
// page's script (and its fetch of JSON) puts there are in the result; the
// page's image is never requested; every request to the page's own host
// was admitted and its place given back.
func TestRender_ScriptBuiltPage(t *testing.T) {
	s := newSite(t)
	r := newRenderer(t)
	p := s.page(t, "/spa", rendering(".price:not(:empty)"))
	var mu sync.Mutex
	var admitted []string
	open := 0
	p.Admit = func(_ context.Context, raw string) (func(int), error) {
		mu.Lock()
		defer mu.Unlock()
		admitted, open = append(admitted, raw), open+1
		return func(int) { mu.Lock(); open--; mu.Unlock() }, nil
	}
	res, err := r.Render(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	html := string(res.HTML)
	for _, want := range []string{"<h1>Rendered lamp</h1>", `<span class="price">$1,299.00</span>`, `href="/p/2"`, `href="/p/3"`, "<!DOCTYPE html>"} {
		if !strings.Contains(html, want) {
			t.Errorf("rendered HTML lacks %s:\n%s", want, html)
		}
	}
	if s.asked("/logo.png") {
		t.Error("the server was asked for /logo.png; images are blocked")
	}
	if len(res.Blocked) != 1 || !strings.HasSuffix(res.Blocked[0], "/logo.png") {
		t.Errorf("Blocked = %v, want the logo", res.Blocked)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{s.URL + "/app.js", s.URL + "/api/product.json"}; !slices.Equal(admitted, want) {
		t.Errorf("admitted %v, want %v (the document comes from its fetch, the image is blocked)", admitted, want)
	}
	if open != 0 {
		t.Errorf("%d budget places still held after the rendering", open)
	}
	if n := strings.Count(strings.Join(s.paths, " "), "/spa"); n != 1 {
		t.Errorf("/spa was asked %d times; the browser must take the fetched document, not ask again", n)
	}
}

// TestRender_Timeout: a page whose script never arrives, or whose
// wait_for never matches, is ErrTimeout, and the renderer serves the next
// page.
func TestRender_Timeout(t *testing.T) {
	s := newSite(t)
	r := newRenderer(t)
	for _, c := range []struct{ name, path, wait string }{
		{"never loads", "/hang", ""},
		{"never matches", "/spa", ".never"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var p Page
			if c.path == "/hang" {
				p = Page{URL: s.URL + "/hang", Status: 200, Body: []byte(`<html><head><script src="/slow.js"></script></head><body>x</body></html>`),
					Rendering: rendering(""), AllowPrivate: true}
			} else {
				p = s.page(t, c.path, rendering(c.wait))
			}
			p.Rendering.Timeout = 2 * time.Second
			_, err := r.Render(context.Background(), p)
			if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "render_timeout") {
				t.Fatalf("Render = %v, want ErrTimeout", err)
			}
		})
	}
	res, err := r.Render(context.Background(), s.page(t, "/spa", rendering("h1:not(:empty)")))
	if err != nil || !strings.Contains(string(res.HTML), "Rendered lamp") {
		t.Fatalf("after the timeouts: %v", err)
	}
}

// TestRender_AddressGuard: a page may not reach an address its job may
// not; the request is refused in the browser and never reaches the
// server.
func TestRender_AddressGuard(t *testing.T) {
	s := newSite(t)
	r := newRenderer(t)
	p := Page{URL: "http://public.invalid/page", Status: 200, Rendering: rendering("#done"),
		Body: []byte(fmt.Sprintf(`<html><body><script>
fetch(%q).then(() => "reached", e => "refused").then(v => {
  const d = document.createElement("div"); d.id = "done"; d.textContent = v; document.body.appendChild(d);
});</script></body></html>`, s.URL+"/secret"))}
	res, err := r.Render(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.HTML), `<div id="done">refused</div>`) {
		t.Errorf("the page's fetch of a loopback address was not refused:\n%s", res.HTML)
	}
	if s.asked("/secret") {
		t.Error("the server got the request to /secret")
	}
	if len(res.Refused) != 1 || res.Refused[0] != s.URL+"/secret" {
		t.Errorf("Refused = %v", res.Refused)
	}
}

// TestRender_BrowserKilled: a browser killed while a page renders fails
// that page as ErrBrowserDied; the next page renders in a new browser.
func TestRender_BrowserKilled(t *testing.T) {
	s := newSite(t)
	r := newRenderer(t)
	count := restarts(t, r)
	if err := r.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	first := r.pid()
	p := Page{URL: s.URL + "/hang", Status: 200, Body: []byte(`<html><head><script src="/slow.js"></script></head></html>`),
		Rendering: rendering(""), AllowPrivate: true}
	p.Rendering.Timeout = time.Minute
	admitted := make(chan struct{}, 1)
	p.Admit = func(context.Context, string) (func(int), error) {
		admitted <- struct{}{}
		return func(int) {}, nil
	}
	errc := make(chan error, 1)
	go func() { _, err := r.Render(context.Background(), p); errc <- err }()
	<-admitted // the page is loading
	if err := killProcess(first); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, ErrBrowserDied) {
		t.Fatalf("Render while the browser was killed = %v, want ErrBrowserDied", err)
	}
	res, err := r.Render(context.Background(), s.page(t, "/spa", rendering("h1:not(:empty)")))
	if err != nil || !strings.Contains(string(res.HTML), "Rendered lamp") {
		t.Fatalf("after the kill: %v", err)
	}
	if r.pid() == first {
		t.Error("the dead browser's pid is still the renderer's")
	}
	if got := count(metrics.RestartDied); got != 1 {
		t.Errorf("restarts for a dead browser counted %v, want 1", got)
	}
}

// TestRender_NoBrowser: a browser that is not there is ErrNoBrowser, from
// Check and from Render.
func TestRender_NoBrowser(t *testing.T) {
	opts := DefaultOptions()
	opts.Browser = "/nonexistent/chromium"
	r, err := New(opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Check(context.Background()); !errors.Is(err, ErrNoBrowser) {
		t.Errorf("Check = %v, want ErrNoBrowser", err)
	}
	if _, err := r.Render(context.Background(), Page{URL: "http://x.invalid/", Rendering: rendering("")}); !errors.Is(err, ErrNoBrowser) {
		t.Errorf("Render = %v, want ErrNoBrowser", err)
	}
}

// restarts is a metrics registry that counts r's browser restarts.
func restarts(t *testing.T, r *Renderer) func(reason string) float64 {
	t.Helper()
	reg, err := metrics.New(metrics.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	r.OnRestart(reg.BrowserRestarted)
	return func(reason string) float64 {
		families, err := reg.Gatherer().Gather()
		if err != nil {
			t.Fatal(err)
		}
		n := 0.0
		for _, f := range families {
			if f.GetName() != "crawler_render_browser_restarts_total" {
				continue
			}
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "reason" && l.GetValue() == reason {
						n += m.GetCounter().GetValue()
					}
				}
			}
		}
		return n
	}
}

// TestRender_MemoryCap: a browser past its memory cap (here 1 byte, so
// always) is restarted between pages, each restart counted in
// crawler_render_browser_restarts_total{reason="memory"}, and every page
// still renders.
func TestRender_MemoryCap(t *testing.T) {
	s := newSite(t)
	opts := DefaultOptions()
	opts.Browser, opts.MaxMemory, opts.Tabs = browsertest.ChromiumPath(t), 1, 1
	r, err := New(opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	r.watchEvery = 0 // the cap between pages alone: while they render it would stop each
	count := restarts(t, r)
	pids := map[int]bool{}
	for i := range 2 * memoryCheckEvery {
		res, err := r.Render(context.Background(), s.page(t, "/spa", rendering(".price:not(:empty)")))
		if err != nil || !strings.Contains(string(res.HTML), "Rendered lamp") {
			t.Fatalf("page %d: %v", i+1, err)
		}
		pids[r.pid()] = true // 0 once a restart is due: none runs until the next page
	}
	delete(pids, 0)
	if got := count(metrics.RestartMemory); got != 2 {
		t.Errorf("memory restarts counted %v after %d pages, want 2 (one per %d pages)", got, 2*memoryCheckEvery, memoryCheckEvery)
	}
	if len(pids) != 2 {
		t.Errorf("pages rendered in %d browsers, want 2 (the cap restarts it after every %d pages)", len(pids), memoryCheckEvery)
	}
	if got := count(metrics.RestartDied) + count(metrics.RestartHung); got != 0 {
		t.Errorf("%v restarts counted as died or hung; the browser only grew", got)
	}
}
