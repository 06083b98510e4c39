package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/render"
)

// RenderOptions configures the rendering benchmark: the same script-built
// page fetched plainly and rendered in headless Chromium, at each
// concurrency in Tabs.
type RenderOptions struct {
	// Browser is the Chromium binary, a path or a name on PATH.
	Browser string
	// Pages is how many pages each row fetches or renders.
	Pages int
	// Tabs are the concurrencies compared: fetchers for a plain fetch,
	// tabs (--render-concurrency) for a rendering.
	Tabs []int
}

// DefaultRenderOptions: 200 pages at 1, 2 and 4 tabs.
func DefaultRenderOptions() RenderOptions {
	return RenderOptions{Browser: render.DefaultBrowser, Pages: 200, Tabs: []int{1, 2, 4}}
}

// Validate reports the first option out of range.
func (o RenderOptions) Validate() error {
	switch {
	case o.Pages < 1:
		return cluster.Invalid("Pages", o.Pages, "is less than 1")
	case len(o.Tabs) == 0:
		return cluster.Invalid("Tabs", o.Tabs, "is empty")
	}
	for _, n := range o.Tabs {
		if n < 1 || n > 256 {
			return cluster.Invalid("Tabs", n, "is outside 1..256")
		}
	}
	return nil
}

// Args are the crawler-bench render flags that give o.
func (o RenderOptions) Args() []string {
	tabs := make([]string, len(o.Tabs))
	for i, n := range o.Tabs {
		tabs[i] = strconv.Itoa(n)
	}
	return []string{"--pages", strconv.Itoa(o.Pages), "--tabs", strings.Join(tabs, ","), "--browser", o.Browser}
}

// RenderRow is one way of reading the pages at one concurrency.
type RenderRow struct {
	Mode  string // "fetch", "render", or "render, own fetcher"
	Tabs  int
	Pages int
	Took  time.Duration
	// CPU is the time this process and the browser spent on the pages.
	CPU time.Duration
	// Memory is the browser's peak proportional resident memory (Pss)
	// over the row; 0 for a plain fetch.
	Memory int64
}

// spaPage is a page whose title and price exist once its script ran and
// fetched the product's JSON.
const spaPage = `<!doctype html><html><head><title>loading</title><script src="/app.js"></script></head>
<body><h1></h1><span class="price"></span><img src="/logo.png"></body></html>`

const spaScript = `document.addEventListener("DOMContentLoaded", async () => {
  const p = await (await fetch("/api/product.json")).json();
  document.querySelector("h1").textContent = p.title;
  document.querySelector(".price").textContent = p.price;
});`

// spaSite serves spaPage on loopback.
func spaSite() *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/spa", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, spaPage) })
	mux.HandleFunc("/app.js", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		_, _ = io.WriteString(w, spaScript)
	})
	mux.HandleFunc("/api/product.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"title":"Rendered lamp","price":"$1,299.00"}`)
	})
	return httptest.NewServer(mux)
}

// Render runs the rendering benchmark: for each concurrency, the page
// fetched plainly, then rendered (its document fetched, loaded in a tab,
// its script and JSON fetched through the same fetch path as a crawl's,
// the DOM read), rows interleaved so that both see the same machine load.
func Render(ctx context.Context, opts RenderOptions) ([]RenderRow, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	site := spaSite()
	defer site.Close()
	f := fetch.New(fetch.DefaultOptions())
	var rows []RenderRow
	for _, tabs := range opts.Tabs {
		row, err := fetchRow(ctx, f, site.URL+"/spa", opts.Pages, tabs)
		if err != nil {
			return rows, err
		}
		rows = append(rows, row)
		for _, direct := range []bool{false, true} {
			if row, err = renderRow(ctx, f, site.URL+"/spa", opts, tabs, direct); err != nil {
				return rows, err
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// fetchRow fetches the page n times, tabs at once.
func fetchRow(ctx context.Context, f *fetch.Fetcher, url string, n, tabs int) (RenderRow, error) {
	req := fetch.Request{URL: url, AllowPrivate: true}
	cpu0, start := selfCPU(), time.Now()
	err := spread(n, tabs, func() error {
		p, err := f.Do(ctx, req)
		p.Release()
		return err
	})
	return RenderRow{Mode: "fetch", Tabs: tabs, Pages: n, Took: time.Since(start), CPU: selfCPU() - cpu0}, err
}

// renderRow renders the page n times in a browser of tabs tabs, started
// (and warmed by one page) before the clock starts; the page's requests
// are sent by f as a crawl's are, or by the renderer's own fetcher when
// direct is set (as crawler check does), to show what the crawl's path
// costs.
func renderRow(ctx context.Context, f *fetch.Fetcher, url string, opts RenderOptions, tabs int, direct bool) (RenderRow, error) {
	ropts := render.DefaultOptions()
	ropts.Browser, ropts.Tabs, ropts.MaxMemory = opts.Browser, tabs, 0
	r, err := render.New(ropts, nil)
	if err != nil {
		return RenderRow{}, err
	}
	defer r.Close()
	one := func() error { return renderOnce(ctx, r, f, url, direct) }
	if err := one(); err != nil {
		return RenderRow{}, err
	}
	var peak atomic.Int64
	cpu0, bcpu0, start := selfCPU(), r.Usage().CPU, time.Now()
	err = spread(opts.Pages, tabs, func() error {
		err := one()
		if u := r.Usage(); u.Memory > peak.Load() {
			peak.Store(u.Memory)
		}
		return err
	})
	took := time.Since(start)
	cpu := selfCPU() - cpu0 + r.Usage().CPU - bcpu0
	mode := "render"
	if direct {
		mode = "render, own fetcher"
	}
	return RenderRow{Mode: mode, Tabs: tabs, Pages: opts.Pages, Took: took, CPU: cpu, Memory: peak.Load()}, err
}

// renderOnce fetches the page and renders it, its requests sent by f (by
// the renderer's own fetcher when direct is set).
func renderOnce(ctx context.Context, r *render.Renderer, f *fetch.Fetcher, url string, direct bool) error {
	p, err := f.Do(ctx, fetch.Request{URL: url, AllowPrivate: true})
	if err != nil {
		return err
	}
	defer p.Release()
	send := viaFetcher(f)
	if direct {
		send = nil
	}
	res, err := r.Render(ctx, render.Page{URL: p.URL, Status: p.Status, ContentType: p.ContentType, Body: p.Body,
		AllowPrivate: true, Fetch: send,
		Rendering: jobspec.Rendering{Timeout: 30 * time.Second, Block: jobspec.DefaultBlock,
			WaitFor: jobspec.WaitFor{CSS: ".price:not(:empty)"}}})
	if err == nil && len(res.HTML) == 0 {
		err = fmt.Errorf("render %s: empty DOM", url)
	}
	return err
}

// viaFetcher sends a rendered page's requests with f, as a crawl does.
func viaFetcher(f *fetch.Fetcher) func(context.Context, render.SubRequest) (render.Answer, error) {
	return func(ctx context.Context, sr render.SubRequest) (render.Answer, error) {
		p, err := f.Do(ctx, fetch.Request{URL: sr.URL, Method: sr.Method, Body: sr.Body, AllowPrivate: true, AllowNonHTML: true})
		if err != nil {
			return render.Answer{}, err
		}
		defer p.Release()
		return render.Answer{Status: p.Status, ContentType: p.ContentType, Body: p.Body}, nil
	}
}

// spread runs do n times, workers at once, and returns the first error.
func spread(n, workers int, do func() error) error {
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	var first error
	var mu sync.Mutex
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				if err := do(); err != nil {
					mu.Lock()
					first = err
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// selfCPU is this process's user and system time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// RenderTable is the rendering benchmark's table.
func RenderTable(rows []RenderRow) Table {
	t := Table{Caption: "Rendered pages beside plain fetches of the same script-built page (loopback)",
		Header: []string{"mode", "tabs", "pages", "pages/s", "CPU ms/page", "browser MiB (Pss)", "MiB/tab"}}
	for _, r := range rows {
		mem, perTab := "-", "-"
		if r.Memory > 0 {
			mem = fmt.Sprintf("%.0f", float64(r.Memory)/(1<<20))
			perTab = fmt.Sprintf("%.0f", float64(r.Memory)/float64(r.Tabs)/(1<<20))
		}
		t.AddRow(r.Mode, fmt.Sprint(r.Tabs), fmt.Sprint(r.Pages), fmt.Sprintf("%.1f", float64(r.Pages)/r.Took.Seconds()),
			fmt.Sprintf("%.2f", float64(r.CPU.Microseconds())/1000/float64(r.Pages)), mem, perTab)
	}
	t.Notes = []string{
		"A rendering fetches the document, loads it in a tab, has its script and JSON sent by the crawl's fetch path (\"render\") or by the renderer's own fetcher (\"render, own fetcher\", as crawler check does; the browser sends nothing itself), and reads the DOM; the image is blocked.",
		"CPU is this process's (the loopback site's included, in both modes) plus the browser's (all its processes, /proc), per page; pages/s is wall time and noisy on a loaded machine: compare CPU per page.",
		"Browser memory is its peak proportional resident set (Pss, shared pages counted once) over the row; MiB/tab divides it by the tabs.",
	}
	return t
}
