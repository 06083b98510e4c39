package render

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/metrics"
)

// done is a page's script that writes what it found in #done.
const done = `function done(v) { const d = document.createElement("div"); d.id = "done"; d.textContent = v; document.body.appendChild(d); }`

// TestRender_NavigationRefused: a page whose script sends its tab to an
// address the guard refuses (the cloud metadata address), or to one whose
// fetch fails, is not read as the browser's error page: the rendering
// fails with ErrNavigation, naming the navigation and why.
func TestRender_NavigationRefused(t *testing.T) {
	r := newRenderer(t)
	for _, c := range []struct {
		name, to, why string
		fetch         func(context.Context, SubRequest) (Answer, error)
	}{
		{"address guard", "http://169.254.169.254/latest/meta-data/", "address guard", nil},
		{"fetch fails", "http://127.0.0.1:1/elsewhere", "the site hung up", func(context.Context, SubRequest) (Answer, error) {
			return Answer{}, errors.New("the site hung up")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := Page{URL: "http://public.invalid/page", Status: 200, Rendering: rendering(""), Fetch: c.fetch, AllowPrivate: true,
				Body: []byte(fmt.Sprintf(`<html><body><p>the page</p><script>location.href = %q;</script></body></html>`, c.to))}
			res, err := r.Render(context.Background(), p)
			if !errors.Is(err, ErrNavigation) {
				t.Fatalf("Render = %v (HTML %q), want ErrNavigation", err, res.HTML)
			}
			if msg := err.Error(); !strings.Contains(msg, c.to) || !strings.Contains(msg, c.why) {
				t.Errorf("the error %q does not say where the page went (%s) and why (%s)", msg, c.to, c.why)
			}
		})
	}
}

// TestRender_AnswerHeaders: the page gets the headers the site sent with
// its requests' answers: a cross-origin fetch() passes CORS and reads an
// exposed header, a gzipped answer is read decompressed, and the cookie
// an answer sets does not reach the page (the job's jar keeps cookies).
func TestRender_AnswerHeaders(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Access-Control-Expose-Headers", "X-Total")
		w.Header().Set("X-Total", "42")
		w.Header().Set("Set-Cookie", "sid=secret; Path=/")
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		var b bytes.Buffer
		z := gzip.NewWriter(&b)
		io.WriteString(z, `{"name":"from the api"}`)
		z.Close()
		w.Write(b.Bytes())
	}))
	t.Cleanup(api.Close)
	other := strings.Replace(api.URL, "127.0.0.1", "localhost", 1) // another origin than the page's
	p := Page{URL: api.URL + "/page", Status: 200, Rendering: rendering("#done"), AllowPrivate: true,
		Body: []byte(fmt.Sprintf(`<html><body><script>%s
(async () => {
  await fetch("/api"); // same origin: its cookie would be the page's
  const r = await fetch(%q);
  done(r.headers.get("x-total") + " " + (await r.json()).name + " cookie=" + document.cookie);
})().catch(e => done("failed: " + e));
</script></body></html>`, done, other+"/api"))}
	res, err := newRenderer(t).Render(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if want := `<div id="done">42 from the api cookie=</div>`; !strings.Contains(string(res.HTML), want) {
		t.Errorf("the page's cross-origin fetch() did not read its answer and headers; want %s in\n%s", want, res.HTML)
	}
}

// TestRender_MemoryCap_whileRendering: a page whose script allocates far
// past the memory cap, in one long task, is stopped while it renders: the
// rendering fails with ErrMemory ("render memory over N"), not with its
// DOM, and the next page renders.
func TestRender_MemoryCap_whileRendering(t *testing.T) {
	s := newSite(t)
	r := newRenderer(t)
	if _, err := r.Render(context.Background(), s.page(t, "/spa", rendering(".price:not(:empty)"))); err != nil {
		t.Fatal(err)
	}
	r.opts.MaxMemory = r.Usage().Memory + 512<<20 // the browser as it is, and half a GiB more
	p := Page{URL: s.URL + "/hog", Status: 200, Rendering: rendering("#never"), AllowPrivate: true,
		Body: []byte(`<html><body><script>
window.keep = [];
setTimeout(() => { for (let i = 0; i < 40; i++) { const b = new Uint8Array(100 << 20); b.fill(1); keep.push(b); } }, 0);
</script></body></html>`)}
	p.Rendering.Timeout = 5 * time.Minute
	_, err := r.Render(context.Background(), p)
	if !errors.Is(err, ErrMemory) || !strings.Contains(err.Error(), "render memory over "+mib(r.opts.MaxMemory)) {
		t.Fatalf("Render of a page that allocates 4GB = %v, want ErrMemory saying render memory over %s", err, mib(r.opts.MaxMemory))
	}
	res, err := r.Render(context.Background(), s.page(t, "/spa", rendering(".price:not(:empty)")))
	if err != nil || !strings.Contains(string(res.HTML), "Rendered lamp") {
		t.Fatalf("after the page over the cap: %v", err)
	}
}

// quietSite serves a page without wait_for whose script fills it, after
// its load event, from a fetch() the server answers slowly, and a page
// whose script asks for more every 100ms, for ever.
func quietSite(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/late.json", func(w http.ResponseWriter, r *http.Request) {
		select { // a slow API: the page's load event is long past when it answers
		case <-time.After(time.Second):
		case <-r.Context().Done():
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"price":"$12.50"}`)
	})
	mux.HandleFunc("/poll", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "more") })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestRender_WaitsForQuietNetwork: without wait_for, a page is read once
// no request of its has been in flight for QuietFor, so the price its
// script fetched after the load event is in the DOM; a page whose
// requests never stop is read as it stands near the end of its
// render_timeout, not failed.
func TestRender_WaitsForQuietNetwork(t *testing.T) {
	srv := quietSite(t)
	r := newRenderer(t)
	t.Run("late fetch", func(t *testing.T) {
		p := Page{URL: srv.URL + "/item", Status: 200, Rendering: rendering(""), AllowPrivate: true,
			Body: []byte(`<html><body><span class="price"></span><script>
addEventListener("load", () => setTimeout(async () => {
  const p = await (await fetch("/late.json")).json();
  document.querySelector(".price").textContent = p.price;
}, 100));
</script></body></html>`)}
		res, err := r.Render(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if want := `<span class="price">$12.50</span>`; !strings.Contains(string(res.HTML), want) || res.Unsettled {
			t.Errorf("Unsettled %v; want the price fetched after the load event, %s, in\n%s", res.Unsettled, want, res.HTML)
		}
	})
	t.Run("never quiet", func(t *testing.T) {
		p := Page{URL: srv.URL + "/busy", Status: 200, Rendering: rendering(""), AllowPrivate: true,
			Body: []byte(`<html><body><p id="n">0</p><script>
setInterval(() => fetch("/poll").then(() => { const n = document.getElementById("n"); n.textContent = +n.textContent + 1; }), 100);
</script></body></html>`)}
		p.Rendering.Timeout = 2 * time.Second
		res, err := r.Render(context.Background(), p)
		if err != nil {
			t.Fatalf("a page whose requests never stop: %v, want it read near its timeout", err)
		}
		if !res.Unsettled || strings.Contains(string(res.HTML), `<p id="n">0</p>`) {
			t.Errorf("Unsettled %v; want true, and the page as its polls left it:\n%s", res.Unsettled, res.HTML)
		}
	})
}

// TestRender_MemoryCap_browserGrew: when the browser's processes pass the
// cap while a page renders but no page holds a tab's share of it (the
// browser itself grew), no page is failed: the browser is restarted, the
// restart counted as for memory, and the page renders.
func TestRender_MemoryCap_browserGrew(t *testing.T) {
	r := newRenderer(t)
	count := restarts(t, r)
	release := make(chan struct{})
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		select { // answers once the browser was retired for memory
		case <-release:
		case <-req.Context().Done():
		}
		io.WriteString(w, "ready")
	}))
	t.Cleanup(api.Close)
	if err := r.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.opts.MaxMemory = r.Usage().Memory / 2 // over it already; each renderer holds far less than a third of it
	go func() {
		testenv.Eventually(t, time.Minute, "a restart for memory", func() bool { return count(metrics.RestartMemory) > 0 })
		close(release)
	}()
	p := Page{URL: api.URL + "/page", Status: 200, Rendering: rendering("#done"), AllowPrivate: true,
		Body: []byte(`<html><body><script>` + done + `
fetch("/api").then(r => r.text()).then(done);
</script></body></html>`)}
	res, err := r.Render(context.Background(), p)
	if err != nil || !strings.Contains(string(res.HTML), `<div id="done">ready</div>`) {
		t.Fatalf("Render while the browser was over the cap = %v, want the page rendered", err)
	}
}
