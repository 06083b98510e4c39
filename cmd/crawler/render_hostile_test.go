package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
)

// hostileShop is a loopback shop whose rendered products misbehave: one
// fills its title from a fetch() answered after its load event, one sends
// its tab to the cloud metadata address, one allocates 4 GB, and one
// opens a WebSocket and gathers WebRTC candidates from a STUN server, at
// the loopback listeners of reach.
func hostileShop(t *testing.T, reach *testenv.Sinks) *httptest.Server {
	t.Helper()
	products := map[string]string{
		"/p/late": `<h1></h1><script>
addEventListener("load", async () => {
  await fetch("/api/first.json");
  const p = await (await fetch("/api/late.json")).json();
  document.querySelector("h1").textContent = p.title;
});</script>`,
		"/p/meta": `<h1>meta</h1><script>location.href = "http://169.254.169.254/latest/meta-data/";</script>`,
		"/p/hog": `<h1>hog</h1><script>window.keep = [];
setTimeout(() => { for (let i = 0; i < 40; i++) { const b = new Uint8Array(100 << 20); b.fill(1); keep.push(b); } }, 0);</script>`,
		"/p/socket": fmt.Sprintf(`<h1>socket</h1><script>
try { new WebSocket("ws://%s/socket"); } catch (e) {}
try {
  const pc = new RTCPeerConnection({iceServers: [{urls: "stun:%s"}]});
  pc.createDataChannel("x");
  pc.createOffer().then(o => pc.setLocalDescription(o));
} catch (e) {}
</script>`, reach.TCP.Addr(), reach.UDP.LocalAddr()),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page := func(body string) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte("<!doctype html><html><body>" + body + "</body></html>"))
		}
		switch p := r.URL.Path; {
		case p == "/":
			var links strings.Builder
			for path := range products {
				fmt.Fprintf(&links, `<a class="p" href="%s">%s</a>`, path, path)
			}
			page(links.String())
		case products[p] != "":
			page(products[p])
		case p == "/api/first.json":
			_, _ = w.Write([]byte(`{}`))
		case p == "/api/late.json":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"title": "Late lamp"}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestCluster_RenderHostilePages: a master and a slave, real processes,
// crawl rendered products that misbehave (issue 29). Without wait_for the
// product whose title comes from a fetch() after its load event is stored
// with it; the one that sends its tab to 169.254.169.254 and the one that
// allocates past the slave's --render-max-memory are recorded in failed,
// once each, with their reasons, not stored as the browser's error page
// or at 4 GB; the one that opens a WebSocket and asks a STUN server is
// stored, and neither listener heard from the browser.
func TestCluster_RenderHostilePages(t *testing.T) {
	t.Parallel()
	env := newClusterEnv(t)
	env.slaveArgs = []string{"--render-max-memory", "1GiB"}
	reach := testenv.NewSinks(t)
	shop := hostileShop(t, reach)
	yaml := `name: hostile
seeds: ["` + shop.URL + `/"]
allow_private_networks: true
per_host_rps: 100
max_retries: 1
render: true
render_timeout: 30s
kinds:
  start:
    links: [{css: a.p, kind: product}]
  product:
    item: true
    fields:
      title: {css: h1, required: true}
`
	env.startCluster(t, 1)
	env.submitYAML(t, "hostile", yaml)
	st := env.wait(t, "hostile", 4*time.Minute)
	got := map[string]string{}
	for _, it := range env.results(t, "hostile") {
		got[strings.TrimPrefix(it.URL, shop.URL)] = asJSON(t, it.Fields)
	}
	want := map[string]string{"/p/late": `{"title":"Late lamp"}`, "/p/socket": `{"title":"socket"}`}
	if len(got) != len(want) || got["/p/late"] != want["/p/late"] || got["/p/socket"] != want["/p/socket"] {
		t.Errorf("items = %v, want %v (status %+v)", got, want, st.Counters)
	}
	reasons := map[string]string{}
	for _, f := range env.failures(t, "hostile") {
		reasons[strings.TrimPrefix(f.URL, shop.URL)] = fmt.Sprintf("%s (%d attempts)", f.Reason, f.Attempts)
	}
	for path, want := range map[string][]string{
		"/p/meta": {"navigated away", "169.254.169.254", "address guard", "(1 attempts)"},
		"/p/hog":  {"render memory over 1024MiB", "(1 attempts)"},
	} {
		for _, w := range want {
			if !strings.Contains(reasons[path], w) {
				t.Errorf("%s failed with %q, want %q in it (all failures %v)", path, reasons[path], w, reasons)
			}
		}
	}
	if len(reasons) != 2 {
		t.Errorf("failures %v, want /p/meta and /p/hog alone", reasons)
	}
	if c, p := reach.Conns(), reach.Packets(); c != 0 || p != 0 {
		t.Errorf("the page's WebSocket listener got %d connections and its STUN listener %d packets; the browser sends nothing itself", c, p)
	}
}
