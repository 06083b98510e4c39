package downloader

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/extract"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/proxy/proxytest"
)

// jobFrom parses a job file and prepares it on g.
func (g *rig) jobFrom(yaml string) *Job {
	g.t.Helper()
	spec, err := jobspec.Parse(strings.NewReader(yaml))
	if err != nil {
		g.t.Fatal(err)
	}
	j, err := g.d.NewJob(spec)
	if err != nil {
		g.t.Fatal(err)
	}
	return j
}

// renderField renders url as a page of kind in job j and returns field
// of the item extracted from the DOM.
func (g *rig) renderField(j *Job, url, kind, field string) any {
	g.t.Helper()
	g.submitKind(j, url, kind)
	res := g.wait(1, 60*time.Second)[0]
	if res.Kind != Fetched || !res.Rendered {
		g.t.Fatalf("%s: result %s (rendered %v): %v", url, res.Kind, res.Rendered, res.Err)
	}
	rules, err := extract.CompileJob(j.Spec)
	if err != nil {
		g.t.Fatal(err)
	}
	out, err := rules.Kind(kind).Extract(context.Background(), res.Page.URL, res.Page.Body)
	if err != nil {
		g.t.Fatal(err)
	}
	return out.Fields[field]
}

// TestDownloader_RenderThroughProxy: a rendered page of a job that
// requires proxies reaches the site only through the proxy, its script's
// fetch() of JSON included: the browser never touches the network.
func TestDownloader_RenderThroughProxy(t *testing.T) {
	s := renderSite(t)
	g, _ := renderRig(t, nil)
	px := g.seedProxies(false, proxytest.NewHTTP)[0]
	j := g.jobFrom(renderJob + "proxy: require\n")
	if title := g.renderField(j, s.URL+"/p/1", "product", "title"); title != "Script lamp" {
		t.Errorf("title = %v, want the one the script fetched", title)
	}
	s.mu.Lock()
	var direct []string
	total := len(s.headers)
	for i, h := range s.headers {
		if h.Get(proxytest.ProxiedBy) == "" {
			direct = append(direct, s.paths[i])
		}
	}
	s.mu.Unlock()
	if len(direct) != 0 || s.count("/api/p1.json") != 1 || int64(total) != px.Requests() {
		t.Errorf("the site saw %d requests, %d of them direct %v, the JSON %d times; the proxy relayed %d; want all through the proxy, the JSON once",
			total, len(direct), direct, s.count("/api/p1.json"), px.Requests())
	}
}

// cookieSite sets a session cookie (Set-Cookie) and a script's cookie
// (document.cookie) on /login; /me is built by a script from /api/me.json,
// which names the cookies it was sent.
func cookieSite(t *testing.T) *site {
	return newSite(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/login":
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "abc", Path: "/", HttpOnly: true})
			html(w, `<html><body><h1 class="done">in</h1><script>document.cookie = "js=1; path=/";</script></body></html>`)
		case "/me":
			html(w, `<html><body><h1></h1><script>
fetch("/api/me.json").then(r => r.json()).then(m => {
  const h = document.querySelector("h1"); h.textContent = m.who; h.className = "done";
});</script></body></html>`)
		case "/api/me.json":
			who := "anonymous"
			if c, err := r.Cookie("session"); err == nil {
				who = c.Value
				if js, err := r.Cookie("js"); err == nil {
					who += "+js" + js.Value
				}
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]string{"who": who})
		default:
			http.NotFound(w, r)
		}
	})
}

const cookieJob = `name: %s
seeds: ["http://127.0.0.1/"]
allow_private_networks: true
per_host_rps: 1000
cookies: true
kinds:
  start:
    links: [{css: a, kind: page}]
  page:
    item: true
    render: true
    wait_for: {css: h1.done}
    render_timeout: 20s
    fields:
      who: {css: h1}
`

// TestDownloader_RenderCookiesPerJob: the cookies one rendered page of a
// job is given, by the site and by its script, are sent with the
// requests of the job's next rendered page (its script's fetch()
// included); another job's pages, rendered by the same browser, do not
// see them.
func TestDownloader_RenderCookiesPerJob(t *testing.T) {
	s := cookieSite(t)
	g, _ := renderRig(t, nil)
	a := g.jobFrom(strings.Replace(cookieJob, "%s", "a", 1))
	b := g.jobFrom(strings.Replace(cookieJob, "%s", "b", 1))
	if got := g.renderField(a, s.URL+"/login", "page", "who"); got != "in" {
		t.Fatalf("login page: %v", got)
	}
	if got := g.renderField(a, s.URL+"/me", "page", "who"); got != "abc+js1" {
		t.Errorf("job a's next page was sent %q, want the session and the script's cookie (abc+js1)", got)
	}
	if got := g.renderField(b, s.URL+"/me", "page", "who"); got != "anonymous" {
		t.Errorf("job b's page was sent %q, want no cookie of job a (anonymous)", got)
	}
}
