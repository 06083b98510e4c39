package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Issue 29's bounds for a run on any page: `run --timeout 10s` returns
// within 12 s, its peak RSS stays under 300 MB, it ends by itself (no
// crash) and prints its summary, and SIGTERM ends it within 2 s.
const (
	hostileTimeout = "10s"
	hostileExit    = 12 * time.Second
	hostileRSS     = 300 << 20
	hostileTerm    = 2 * time.Second
	// hostileKill is when a run that ignores its bounds is killed, so
	// the test reports it rather than hang.
	hostileKill = 2 * time.Minute
)

// hostileBinEnv names a crawler binary the suite runs instead of its own
// build: the same fixtures measure a binary from before a fix.
const hostileBinEnv = "CRAWLER_TEST_HOSTILE_BIN"

var (
	plainOnce sync.Once
	plainBin  string
	plainDir  string // removed by TestMain
	plainErr  error
)

// plainBinary is the crawler built without -race: the race detector's
// shadow memory and slowdown are not what a user runs, and the suite
// bounds memory and time.
func plainBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv(hostileBinEnv); bin != "" {
		return bin
	}
	plainOnce.Do(func() {
		dir, err := os.MkdirTemp("", "crawler-plain")
		if err != nil {
			plainErr = err
			return
		}
		plainDir = dir
		bin := filepath.Join(dir, "crawler")
		if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
			plainErr = fmt.Errorf("build crawler: %v\n%s", err, out)
			return
		}
		plainBin = bin
	})
	if plainErr != nil {
		t.Fatal(plainErr)
	}
	return plainBin
}

// hostileSite serves issue 29's hostile pages on loopback, each built in
// the test; robots is a second origin, whose robots.txt is hostile.
// served is told the path of each hostile body once it is written, so a
// test knows the crawler holds it.
type hostileSite struct {
	*httptest.Server
	robots *httptest.Server
	served chan string
}

func newHostileSite(t *testing.T) *hostileSite {
	t.Helper()
	s := &hostileSite{served: make(chan string, 64)}
	robots := http.NewServeMux()
	txt := hostileRobotsTxt()
	robots.HandleFunc("/robots.txt", func(w http.ResponseWriter, _ *http.Request) { w.Write(txt) })
	// the list page is the hostile body: its links are what robots.txt
	// is matched against, once it is read
	s.hostileStream(robots, "/list", "text/html", func(w io.Writer) error {
		long := strings.Repeat("a", 7_000)
		for i := range 300 {
			if _, err := fmt.Fprintf(w, `<a class="d" href="/d/%d%s">%d</a>`, i, long, i); err != nil {
				return err
			}
		}
		return nil
	})
	robots.HandleFunc("/d/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body><h1>fine</h1></body></html>")
	})
	s.robots = httptest.NewServer(robots)
	t.Cleanup(s.robots.Close)
	mux := http.NewServeMux()
	s.hostile(mux, "/ld/", "text/html", jsonLDPage(1_000_000))
	s.hostileStream(mux, "/json/deep", "application/json", func(w io.Writer) error { return writeNested(w, 5_000_000) })
	s.hostileStream(mux, "/json64/deep", "application/json", func(w io.Writer) error { return writeNested(w, 20_000_000) })
	s.hostile(mux, "/links/list", "text/html", longLinksPage(50_000))
	s.hostile(mux, "/sitemap/deep.xml.gz", "application/gzip", sitemapBomb())
	mux.HandleFunc("/sitemap/big.xml", s.bigSitemap)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body><h1>fine</h1>")
		for i := range 4 {
			fmt.Fprintf(w, `<a class="d" href="%sd/%d">%d</a>`, strings.TrimSuffix(r.URL.Path, "list"), i, i)
		}
		fmt.Fprint(w, "</body></html>")
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// hostileStream serves what write writes at pattern, without holding it
// (the test process's own memory counts in its child's peak RSS: see
// startHostile), and reports each time it was written.
func (s *hostileSite) hostileStream(mux *http.ServeMux, pattern, contentType string, write func(io.Writer) error) {
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		if write(w) == nil {
			select {
			case s.served <- r.URL.Path:
			default:
			}
		}
	})
}

// writeNested writes n "[" then n "]".
func writeNested(w io.Writer, n int) error {
	for _, c := range []string{"[", "]"} {
		chunk := []byte(strings.Repeat(c, 1<<16))
		for left := n; left > 0; left -= len(chunk) {
			if _, err := w.Write(chunk[:min(left, len(chunk))]); err != nil {
				return err
			}
		}
	}
	return nil
}

// hostile serves body at pattern and reports each time it was written.
func (s *hostileSite) hostile(mux *http.ServeMux, pattern, contentType string, body []byte) {
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(pattern, "/") && !strings.Contains(r.URL.Path, "/d/") {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<html><body><a class="d" href="%sd/1">1</a><a class="d" href="%sd/2">2</a></body></html>`, pattern, pattern)
			return
		}
		w.Header().Set("Content-Type", contentType)
		if _, err := w.Write(body); err == nil {
			select {
			case s.served <- r.URL.Path:
			default:
			}
		}
	})
}

// bigSitemap streams a 200 MB uncompressed sitemap of page URLs.
func (s *hostileSite) bigSitemap(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/xml")
	io.WriteString(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	var b bytes.Buffer
	for i := 0; b.Len() < 1<<20; i++ {
		fmt.Fprintf(&b, "<url><loc>http://%s/sitemap/d/%d</loc></url>\n", r.Host, i%1000)
	}
	defer func() {
		select {
		case s.served <- r.URL.Path:
		default:
		}
	}()
	for range 200 {
		if _, err := w.Write(b.Bytes()); err != nil {
			return // the crawler read what it takes of it
		}
	}
	io.WriteString(w, "</urlset>")
}

// jsonLDPage is an item page whose JSON-LD block is n "[" then n "]".
func jsonLDPage(n int) []byte {
	return []byte(`<html><head><script type="application/ld+json">` + strings.Repeat("[", n) + strings.Repeat("]", n) +
		`</script></head><body><h1>deep</h1></body></html>`)
}

// hostileRobotsTxt is 30 rules of "/" then 8,000 "*a" then "bN" (480 KB).
func hostileRobotsTxt() []byte {
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for i := range 30 {
		fmt.Fprintf(&b, "Disallow: /%sb%d\n", strings.Repeat("*a", 8_000), i)
	}
	return []byte(b.String())
}

// longLinksPage is a list page of n links under a <base href> of 8 KB.
func longLinksPage(n int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `<html><head><base href="/links/%s/"></head><body>`, strings.Repeat("x", 8_000))
	for i := range n {
		fmt.Fprintf(&b, `<a class="d" href="p%d">%d</a>`, i, i)
	}
	b.WriteString("</body></html>")
	return []byte(b.String())
}

// sitemapBomb is 50 KB gzipped of "<a>" nested 16M deep (50 MiB).
func sitemapBomb() []byte {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	io.WriteString(zw, "<urlset><url>")
	chunk := []byte(strings.Repeat("<a>", 1<<16))
	for range (50 << 20) / len(chunk) {
		zw.Write(chunk)
	}
	zw.Close()
	return b.Bytes()
}

// hostileJobs are the job files of the fixtures, by name: %[1]s is the
// site's URL, %[2]s the robots origin's.
var hostileJobs = map[string]string{
	// issue 29, item 1: a JSON-LD field over nested lists
	"jsonld": `seeds: ["%[1]s/ld/"]
detail_link: {css: "a.d"}
fields: {title: {css: "h1"}, brand: {jsonld: "brand.name"}}`,
	// item 2: robots.txt wildcards against long paths
	"robots": `seeds: ["%[2]s/list"]
obey_robots: true
detail_link: {css: "a.d"}
fields: {title: {css: "h1"}}`,
	// item 3: a JSON page of 5M "[" then 5M "]" (the default 10 MiB limit)
	"deepjson": `seeds: [{url: "%[1]s/json/deep", kind: api}]
kinds:
  api: {format: json, links: [{json: "items.#.url", kind: product}]}
  product: {item: true, fields: {title: {css: "h1"}}}`,
	// item 3: 20M "[" at 64 MB max_body_bytes crashed with a stack overflow
	"deepjson64": `seeds: [{url: "%[1]s/json64/deep", kind: api}]
max_body_bytes: 67108864
kinds:
  api: {format: json, links: [{json: "items.#.url", kind: product}]}
  product: {item: true, fields: {title: {css: "h1"}}}`,
	// item 8: a link rule's regex over long links
	"links": `seeds: ["%[1]s/links/list"]
detail_link: {css: "a.d", allow: "/p\\d+$", deny: "print"}
fields: {title: {css: "h1"}}`,
	// item 8: a 200 MB uncompressed sitemap
	"bigsitemap": `seeds: ["%[1]s/sitemap/"]
sitemaps: [{url: "%[1]s/sitemap/big.xml", kind: product}]
kinds:
  start: {links: [{css: "a.d", kind: product}]}
  product: {item: true, fields: {title: {css: "h1"}}}`,
	// a gzipped sitemap of elements nested 16M deep
	"deepsitemap": `seeds: ["%[1]s/sitemap/"]
sitemaps: [{url: "%[1]s/sitemap/deep.xml.gz", kind: product}]
kinds:
  start: {links: [{css: "a.d", kind: product}]}
  product: {item: true, fields: {title: {css: "h1"}}}`,
}

// writeHostileJob writes the fixture's job file.
func writeHostileJob(t *testing.T, name string, site *hostileSite) string {
	t.Helper()
	spec := fmt.Sprintf("name: hostile-%s\nallow_private_networks: true\nper_host_rps: 100\nper_host_concurrency: 8\n", name) +
		fmt.Sprintf(hostileJobs[name], site.URL, site.robots.URL) + "\n"
	path := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// hostileRun is one run of the binary on a fixture.
type hostileRun struct {
	cmd    *exec.Cmd
	out    *syncBuffer
	began  time.Time
	done   chan struct{}
	err    error
	took   time.Duration
	maxRSS int64 // bytes
}

// startHostile starts `crawler run --timeout 10s` on a fixture's job; it
// is killed if it outlives hostileKill. Its peak RSS is what wait4 says,
// which is at least the test process's own at the fork (Linux records the
// memory the child shared with it before exec), so the fixtures are
// streamed rather than held: the figure is an upper bound.
func startHostile(t *testing.T, bin, job string) *hostileRun {
	t.Helper()
	out := filepath.Join(t.TempDir(), "items.jsonl")
	r := &hostileRun{out: &syncBuffer{}, done: make(chan struct{})}
	r.cmd = exec.Command(bin, "run", "--job", job, "-o", out, "--timeout", hostileTimeout, "--log-level", "warn")
	r.cmd.Stdout, r.cmd.Stderr, r.cmd.Env = r.out, r.out, cleanEnv()
	r.began = time.Now()
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	kill := time.AfterFunc(hostileKill, func() { _ = r.cmd.Process.Kill() })
	go func() {
		r.err = r.cmd.Wait()
		r.took = time.Since(r.began)
		kill.Stop()
		if ru, ok := r.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			r.maxRSS = ru.Maxrss << 10 // KiB on Linux
		}
		close(r.done)
	}()
	t.Cleanup(func() { _ = r.cmd.Process.Kill(); <-r.done })
	return r
}

// checkEnded checks that the run ended by itself (an exit code, not a
// signal or Go's exit code 2 of a crash) within bound, under hostileRSS.
func (r *hostileRun) checkEnded(t *testing.T, bound time.Duration, summary bool) {
	t.Helper()
	<-r.done
	code := r.cmd.ProcessState.ExitCode()
	t.Logf("exit %d after %s, peak RSS %d MB", code, r.took.Round(time.Millisecond), r.maxRSS>>20)
	if os.Getenv("CRAWLER_TEST_LOGS") != "" {
		t.Logf("output:\n%s", tail(r.out.String(), 4000))
	}
	if code < 0 || code == 2 {
		t.Errorf("crashed or killed (exit %d, %v):\n%s", code, r.err, tail(r.out.String(), 3000))
	}
	if r.took > bound {
		t.Errorf("took %s, want at most %s", r.took.Round(time.Millisecond), bound)
	}
	if r.maxRSS > hostileRSS {
		t.Errorf("peak RSS %d MB, want at most %d", r.maxRSS>>20, hostileRSS>>20)
	}
	if said := r.out.String(); summary && (!strings.Contains(said, "elapsed") || !strings.Contains(said, "items: ")) {
		t.Errorf("no summary printed:\n%s", tail(said, 3000))
	}
}

// TestRun_hostilePages (issue 29): every fixture, run with --timeout 10s,
// ends by itself within 12 s, under 300 MB, and prints its summary.
// Fixtures run one at a time: the bounds are per process.
func TestRun_hostilePages(t *testing.T) {
	site := newHostileSite(t)
	bin := plainBinary(t)
	for _, name := range hostileNames() {
		t.Run(name, func(t *testing.T) {
			startHostile(t, bin, writeHostileJob(t, name, site)).checkEnded(t, hostileExit, true)
		})
	}
}

// TestRun_hostileSigterm (issue 29): SIGTERM ends a run within 2 s
// whatever page it holds: each fixture is signalled once the crawler has
// been sent its hostile body.
func TestRun_hostileSigterm(t *testing.T) {
	site := newHostileSite(t)
	bin := plainBinary(t)
	for _, name := range hostileNames() {
		t.Run(name, func(t *testing.T) {
			for len(site.served) > 0 {
				<-site.served
			}
			r := startHostile(t, bin, writeHostileJob(t, name, site))
			select {
			case path := <-site.served:
				t.Logf("served %s", path)
			case <-r.done:
				t.Skipf("the run ended before it was sent a hostile body (exit %d)", r.cmd.ProcessState.ExitCode())
			}
			sent := time.Now()
			if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			<-r.done
			if took := time.Since(sent); took > hostileTerm {
				t.Errorf("SIGTERM: ended %s after it, want at most %s\n%s", took.Round(time.Millisecond), hostileTerm, tail(r.out.String(), 3000))
			}
			r.checkEnded(t, hostileKill, false)
		})
	}
}

// TestRun_hostileModifiers (issue 29, item 3): a json path with a modifier
// a page can blow up (@pretty crashed the process on a 2 MB deep page) is
// refused before the run starts, naming the rule.
func TestRun_hostileModifiers(t *testing.T) {
	site := newHostileSite(t)
	bin := plainBinary(t)
	for _, path := range []string{"@pretty", `@flatten:{"deep":true}`, "@dig:url"} {
		job := filepath.Join(t.TempDir(), "modifier.yaml")
		spec := fmt.Sprintf(`name: hostile-modifier
allow_private_networks: true
seeds: [{url: "%s/json/deep", kind: api}]
kinds:
  api: {format: json, links: [{json: '%s', kind: product}]}
  product: {item: true, fields: {title: {css: "h1"}}}
`, site.URL, path)
		if err := os.WriteFile(job, []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
		r := startHostile(t, bin, job)
		r.checkEnded(t, hostileExit, false)
		if said := r.out.String(); r.cmd.ProcessState.ExitCode() == 0 || !strings.Contains(said, "kinds.api.links[0].json") {
			t.Errorf("json %q: exit %d, said %s; want an error naming kinds.api.links[0].json", path, r.cmd.ProcessState.ExitCode(), tail(said, 2000))
		}
	}
}

// hostileNames are the fixtures' names in order.
func hostileNames() []string {
	names := make([]string, 0, len(hostileJobs))
	for name := range hostileJobs {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
