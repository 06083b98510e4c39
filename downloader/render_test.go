package downloader

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/extract"
	"github.com/crawler-dev/crawler/metrics"
	"github.com/crawler-dev/crawler/render"
	"github.com/crawler-dev/crawler/statuspage/browsertest"
)

// renderSite serves a product page built by script: its title, price and
// related links come from /api/p1.json, fetched by the page; the page
// also asks for /private.json, which robots.txt disallows, and an image.
func renderSite(t *testing.T) *site {
	return newSite(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			_, _ = w.Write([]byte("User-agent: *\nDisallow: /private\n"))
		case "/p/1":
			html(w, `<html><body><h1></h1><b class="price"></b><div id="rel"></div><img src="/big.png">
<script>
fetch("/private.json").catch(() => {});
fetch("/api/p1.json").then(r => r.json()).then(p => {
  document.querySelector("h1").textContent = p.title;
  document.getElementById("rel").innerHTML = p.related.map(u => '<a class="related" href="' + u + '">x</a>').join("");
  document.querySelector(".price").textContent = p.price;
});
</script></body></html>`)
		case "/api/p1.json":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"title":"Script lamp","price":"1.299,00 €","related":["/p/2","/p/3"]}`))
		case "/never":
			html(w, `<html><body><h1>static</h1></body></html>`)
		default:
			http.NotFound(w, r)
		}
	})
}

const renderJob = `name: spa
seeds: ["http://127.0.0.1/"]
allow_private_networks: true
per_host_rps: 1000
max_retries: 1
kinds:
  start:
    links: [{css: "a", kind: product}]
  product:
    item: true
    render: true
    wait_for: {css: ".price:not(:empty)"}
    render_timeout: 3s
    fields:
      title: {css: h1, required: true}
      price: {css: .price, type: number}
    links:
      - {css: "a.related", kind: product}
`

// renderRig is a rig with a renderer, recording into reg (nil: nowhere),
// and renderJob on it.
func renderRig(t *testing.T, reg *metrics.Registry) (*rig, *Job) {
	t.Helper()
	ropts := render.DefaultOptions()
	ropts.Browser = browsertest.ChromiumPath(t)
	rr, err := render.New(ropts, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rr.Close() })
	g := newRigWith(t, fastOptions(), Deps{Renderer: rr, Metrics: reg.Node(metrics.RoleSlave, 0)})
	return g, g.renderJob()
}

// renderJob is renderJob's Job on g.
func (g *rig) renderJob() *Job {
	g.t.Helper()
	return g.jobFrom(renderJob)
}

// TestDownloader_Render: a page of a kind that renders comes back as the
// DOM its script built, and the job's extraction reads the fields and
// links that exist only there; the page's request that robots.txt
// disallows and its image never reach the site.
func TestDownloader_Render(t *testing.T) {
	s := renderSite(t)
	g, j := renderRig(t, nil)
	g.submitKind(j, s.URL+"/p/1", "product")
	res := g.wait(1, 60*time.Second)[0]
	if res.Kind != Fetched {
		t.Fatalf("result %s: %v", res.Kind, res.Err)
	}
	if !res.Rendered {
		t.Error("Rendered is false for a page read from its rendered DOM")
	}
	rules, err := extract.CompileJob(j.Spec)
	if err != nil {
		t.Fatal(err)
	}
	out, err := rules.Kind("product").Extract(context.Background(), res.Page.URL, res.Page.Body)
	if err != nil {
		t.Fatal(err)
	}
	if out.Fields["title"] != "Script lamp" || out.Fields["price"] != 1299.0 {
		t.Errorf("fields = %v, want the script's title and price", out.Fields)
	}
	var links []string
	for _, l := range out.Links {
		links = append(links, l.URL)
	}
	if want := s.URL + "/p/2 " + s.URL + "/p/3"; strings.Join(links, " ") != want {
		t.Errorf("links = %v, want %s", links, want)
	}
	if n := s.count("/private.json"); n != 0 {
		t.Errorf("/private.json asked %d times; robots.txt disallows it", n)
	}
	if n := s.count("/big.png"); n != 0 {
		t.Errorf("/big.png asked %d times; images are blocked", n)
	}
	if s.count("/api/p1.json") != 1 || s.count("/p/1") != 1 {
		t.Errorf("/p/1 asked %d times, its JSON %d times; want once each", s.count("/p/1"), s.count("/api/p1.json"))
	}
}

// TestDownloader_RenderTimeout: a page whose wait_for never matches is
// retried as a timeout and then fails, transient, with the reason
// render_timeout.
func TestDownloader_RenderTimeout(t *testing.T) {
	s := renderSite(t)
	g, j := renderRig(t, nil)
	g.submitKind(j, s.URL+"/never", "product")
	res := g.wait(1, 90*time.Second)[0]
	if res.Kind != Failed || !res.Transient || !errors.Is(res.Err, render.ErrTimeout) {
		t.Fatalf("result %s (transient %v): %v; want a transient render_timeout failure", res.Kind, res.Transient, res.Err)
	}
	if !strings.Contains(res.Err.Error(), "render_timeout") {
		t.Errorf("reason %q does not say render_timeout", res.Err)
	}
	if res.Tries != 2 || s.count("/never") != 2 {
		t.Errorf("tries %d, page asked %d times; want 2 (max_retries 1)", res.Tries, s.count("/never"))
	}
}

// TestDownloader_RenderWithoutRenderer: a rendered kind on a process with
// no renderer fails at once with a reason that says so.
func TestDownloader_RenderWithoutRenderer(t *testing.T) {
	s := renderSite(t)
	g := newRig(t, fastOptions())
	j := g.renderJob()
	g.submitKind(j, s.URL+"/p/1", "product")
	res := g.wait(1, 30*time.Second)[0]
	if res.Kind != Failed || res.Transient || !errors.Is(res.Err, ErrNoRenderer) {
		t.Fatalf("result %s (transient %v): %v; want ErrNoRenderer", res.Kind, res.Transient, res.Err)
	}
}

// TestDownloader_renderMetrics: each rendering is observed in
// crawler_render_duration_seconds under its result, with the time it
// took: a page that renders once as ok, a page that never matches its
// wait_for once per try as timeout.
func TestDownloader_renderMetrics(t *testing.T) {
	s := renderSite(t)
	reg, err := metrics.New(metrics.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	g, j := renderRig(t, reg)
	g.submitKind(j, s.URL+"/p/1", "product")
	g.submitKind(j, s.URL+"/never", "product")
	g.wait(2, 90*time.Second)
	families, err := reg.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	count, seconds := map[string]uint64{}, map[string]float64{}
	for _, f := range families {
		if f.GetName() != "crawler_render_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" {
					count[l.GetValue()] += m.GetHistogram().GetSampleCount()
					seconds[l.GetValue()] += m.GetHistogram().GetSampleSum()
				}
			}
		}
	}
	if count[metrics.RenderOK] != 1 || count[metrics.RenderTimeout] != 2 || len(count) != 2 {
		t.Errorf("renderings observed %v, want 1 ok and 2 timeout (max_retries 1)", count)
	}
	// The timeouts each waited out render_timeout (3s); the page that
	// rendered took some time too.
	if seconds[metrics.RenderOK] <= 0 || seconds[metrics.RenderTimeout] < 2*3 {
		t.Errorf("render seconds observed %v, want > 0 for ok and >= 6 for the two timeouts", seconds)
	}
}
