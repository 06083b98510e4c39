package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// renderShop is a loopback shop built by script: the start page's links
// to products, and each product's title and price (fetched as JSON), exist
// only once its script has run. /p/hang never finishes loading.
func renderShop(t *testing.T) *httptest.Server {
	t.Helper()
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page := func(body string) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte("<!doctype html><html><body>" + body + "</body></html>"))
		}
		switch {
		case r.URL.Path == "/":
			page(`<div id="nav"></div><script>
for (const p of ["/p/1", "/p/2", "/p/hang"]) {
  const a = document.createElement("a"); a.className = "p"; a.href = p; a.textContent = p;
  document.getElementById("nav").appendChild(a);
}</script>`)
		case r.URL.Path == "/p/1" || r.URL.Path == "/p/2":
			id := strings.TrimPrefix(r.URL.Path, "/p/")
			page(`<h1></h1><span class="price"></span><script>
fetch("/api/` + id + `.json").then(r => r.json()).then(p => {
  document.querySelector("h1").textContent = p.title;
  document.querySelector(".price").textContent = p.price;
  document.body.classList.add("ready");
});</script>`)
		case strings.HasPrefix(r.URL.Path, "/api/"):
			w.Header().Set("Content-Type", "application/json")
			id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/api/"), ".json")
			_, _ = w.Write([]byte(`{"title": "Lamp ` + id + `", "price": "$` + id + `9.50"}`))
		case r.URL.Path == "/p/hang":
			page(`<h1>static</h1><script src="/slow.js"></script>`)
		case r.URL.Path == "/slow.js":
			select {
			case <-hang:
			case <-r.Context().Done():
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(func() { close(hang); srv.Close() })
	return srv
}

// TestCluster_Render: a master and a slave, real processes, crawl a shop
// built by script: the master renders the start page to find the product
// links, the slave renders each product (its fields come from a fetch()
// of JSON), and the product that never loads is retried, then recorded in
// failed with the reason render_timeout.
func TestCluster_Render(t *testing.T) {
	t.Parallel()
	env := newClusterEnv(t)
	shop := renderShop(t)
	job := filepath.Join(t.TempDir(), "spa.yaml")
	yaml := `name: spa
seeds: ["` + shop.URL + `/"]
allow_private_networks: true
per_host_rps: 100
max_retries: 1
render: true
render_timeout: 5s
kinds:
  start:
    links: [{css: a.p, kind: product}]
  product:
    item: true
    wait_for: {css: body.ready}
    fields:
      title: {css: h1, required: true}
      price: {css: .price, type: number}
`
	if err := os.WriteFile(job, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	env.startMaster(t, "master")
	env.startSlave(t, 0)
	env.waitSlaves(t, 0)
	env.submit(t, "spa", job)
	st := env.wait(t, "spa", 4*time.Minute)
	got := map[string]string{}
	for _, it := range env.results(t, "spa") {
		got[strings.TrimPrefix(it.URL, shop.URL)] = asJSON(t, it.Fields)
	}
	want := map[string]string{"/p/1": `{"price":19.5,"title":"Lamp 1"}`, "/p/2": `{"price":29.5,"title":"Lamp 2"}`}
	if len(got) != len(want) || got["/p/1"] != want["/p/1"] || got["/p/2"] != want["/p/2"] {
		t.Errorf("items = %v, want %v (status %+v)", got, want, st.Counters)
	}
	// The start page and the two products stored were rendered; the page
	// that never loads was not.
	if st.Counters.Rendered != 3 {
		t.Errorf("rendered = %d, want 3 (status %+v)", st.Counters.Rendered, st.Counters)
	}
	out, errOut, err := crawler(t, time.Minute, append([]string{"client", "status", "--job", "spa"}, env.flags()...)...)
	if err != nil || !strings.Contains(out, "rendered in the browser 3 ") {
		t.Errorf("client status: %v %s\n%s; want the rendered count", err, errOut, out)
	}
	fails := env.failures(t, "spa")
	if len(fails) != 1 || !strings.HasSuffix(fails[0].URL, "/p/hang") || !strings.Contains(fails[0].Reason, "render_timeout") ||
		fails[0].Attempts != 2 {
		t.Errorf("failures = %+v, want /p/hang after 2 attempts with reason render_timeout", fails)
	}
}
