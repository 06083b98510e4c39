package demosite

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/text/encoding/simplifiedchinese"

	"github.com/crawler-dev/crawler/canon"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/robots"
)

func serve(t *testing.T, opts Options) (*Site, *httptest.Server) {
	t.Helper()
	s := New(opts)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv
}

func get(t *testing.T, u string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", u, err)
	}
	return resp, body
}

// crawl walks the list pages breadth-first from /list/1 as the master does
// (every a.next, canonicalized) and returns the list pages fetched and the
// canonical path+query of every detail link on the site's own host.
func crawl(t *testing.T, srv *httptest.Server) (lists []string, details map[string]int, offsite int) {
	t.Helper()
	start, _ := canon.URL(srv.URL + "/list/1")
	seen := map[string]bool{start: true}
	frontier := []string{start}
	details = map[string]int{}
	host := strings.TrimPrefix(srv.URL, "http://")
	for len(frontier) > 0 {
		page := frontier[0]
		frontier = frontier[1:]
		resp, body := get(t, page)
		if resp.StatusCode != 200 {
			t.Errorf("list page %s answers %d, want 200 (linked from an earlier page)", page, resp.StatusCode)
			continue
		}
		lists = append(lists, page)
		base, _ := url.Parse(page)
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		doc.Find(".item a").Each(func(_ int, s *goquery.Selection) {
			c, err := canon.Ref(base, s.AttrOr("href", ""))
			if err != nil {
				t.Errorf("detail link %q on %s: %v", s.AttrOr("href", ""), page, err)
				return
			}
			u, _ := url.Parse(c)
			if u.Host != host {
				offsite++
				return
			}
			details[u.RequestURI()]++
		})
		doc.Find("a.next").Each(func(_ int, s *goquery.Selection) {
			c, err := canon.Ref(base, s.AttrOr("href", ""))
			if err != nil {
				t.Errorf("next link %q on %s: %v", s.AttrOr("href", ""), page, err)
				return
			}
			if !seen[c] {
				seen[c] = true
				frontier = append(frontier, c)
			}
		})
	}
	return lists, details, offsite
}

func TestSite_ListPages(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      Options
		wantPages int
	}{
		{"defaults", Options{}, 15},
		{"small pages", Options{Details: 47, PerPage: 10, Overlap: 3}, 7},
		{"one full page", Options{Details: 25}, 1},
		{"fewer details than the overlap", Options{Details: 3}, 1},
		{"one detail", Options{Details: 1, PerPage: 1}, 1},
		{"no overlap", Options{Details: 40, PerPage: 10, Overlap: -1}, 4},
		{"overlap not below a page", Options{Details: 30, PerPage: 10, Overlap: 10}, 21},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, srv := serve(t, tc.opts)
			if got := s.ListPages(); got != tc.wantPages {
				t.Errorf("ListPages = %d, want %d", got, tc.wantPages)
			}
			lists, details, offsite := crawl(t, srv)
			if len(lists) != s.ListPages() {
				t.Errorf("crawl fetched %d list pages, ListPages says %d", len(lists), s.ListPages())
			}
			if offsite != len(lists) {
				t.Errorf("%d offsite links on %d pages, want one ad per page", offsite, len(lists))
			}
			got := make([]string, 0, len(details))
			for p := range details {
				got = append(got, p)
			}
			want := make([]string, 0)
			for p := range s.Expected() {
				want = append(want, p)
			}
			sort.Strings(got)
			sort.Strings(want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("canonical detail links found (%d) differ from Expected (%d):\n got %q\nwant %q", len(got), len(want), got, want)
			}
		})
	}
	t.Run("details linked more than once", func(t *testing.T) {
		_, srv := serve(t, Options{})
		_, details, _ := crawl(t, srv)
		twice := 0
		for _, n := range details {
			if n > 1 {
				twice++
			}
		}
		if twice != 14*5 { // 5 overlapping links between each of 15 consecutive pages
			t.Errorf("%d details linked twice, want 70", twice)
		}
	})
}

func TestSite_variants(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "http://demo.test:8080/list/3", nil)
	base, _ := url.Parse("http://demo.test:8080/list/3")
	for _, id := range []int{1, 2, 3, 4, 37, 300} {
		want, err := canon.URL("http://demo.test:8080" + CanonicalPath(id))
		if err != nil {
			t.Fatal(err)
		}
		spellings := map[string]bool{}
		for k := 0; k < 5; k++ {
			v := variant(r, id, k)
			spellings[v] = true
			got, err := canon.Ref(base, v)
			if err != nil || got != want {
				t.Errorf("id %d variant %d %q canonicalizes to %q, %v; want %q", id, k, v, got, err, want)
			}
		}
		if len(spellings) != 5 {
			t.Errorf("id %d has %d distinct spellings, want 5", id, len(spellings))
		}
	}
}

func TestSite_ServeHTTP(t *testing.T) {
	s, srv := serve(t, Options{})
	t.Run("root redirects to the first list page", func(t *testing.T) {
		resp, _ := get(t, srv.URL+"/")
		if resp.StatusCode != 200 || resp.Request.URL.Path != "/list/1" {
			t.Errorf("GET / ended at %s with %d, want /list/1 with 200", resp.Request.URL.Path, resp.StatusCode)
		}
	})
	t.Run("detail page", func(t *testing.T) {
		resp, body := get(t, srv.URL+CanonicalPath(12))
		a := ArticleFor(12)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
			t.Fatalf("detail 12: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		for _, want := range []string{"<h1>" + a.Title + "</h1>", `<span class="tag">` + a.Tags[0] + "</span>", `src="/img/12.jpg"`} {
			if !strings.Contains(string(body), want) {
				t.Errorf("detail 12 lacks %q", want)
			}
		}
	})
	t.Run("gone page answers 404", func(t *testing.T) {
		if got := s.Expected()[CanonicalPath(101)]; got != Gone {
			t.Errorf("Expected[101] = %v, want Gone", got)
		}
		if got := s.Expected()[CanonicalPath(100)]; got != Stored {
			t.Errorf("Expected[100] = %v, want Stored", got)
		}
		for i := 0; i < 2; i++ {
			if resp, _ := get(t, srv.URL+CanonicalPath(101)); resp.StatusCode != 404 {
				t.Errorf("detail 101 try %d answers %d, want 404", i+1, resp.StatusCode)
			}
		}
	})
	t.Run("flaky page answers 503 once", func(t *testing.T) {
		var codes []int
		for i := 0; i < 3; i++ {
			resp, _ := get(t, srv.URL+CanonicalPath(37))
			codes = append(codes, resp.StatusCode)
		}
		if want := []int{503, 200, 200}; !reflect.DeepEqual(codes, want) {
			t.Errorf("detail 37 answers %v, want %v", codes, want)
		}
		if n := s.Hits("/detail/37"); n != 3 {
			t.Errorf("Hits(/detail/37) = %d, want 3", n)
		}
		if resp, _ := get(t, srv.URL+CanonicalPath(38)); resp.StatusCode != 200 {
			t.Errorf("detail 38 answers %d, want 200", resp.StatusCode)
		}
	})
	t.Run("GBK page declares its charset", func(t *testing.T) {
		for _, id := range []int{7, 57} {
			resp, raw := get(t, srv.URL+CanonicalPath(id))
			if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=gbk" {
				t.Errorf("detail %d Content-Type = %q, want text/html; charset=gbk", id, ct)
			}
			body, err := simplifiedchinese.GBK.NewDecoder().Bytes(raw)
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("<h1>第%d条：", id)
			if !strings.Contains(string(body), `<meta charset="gbk">`) || !strings.Contains(string(body), want) {
				t.Errorf("detail %d decoded from GBK lacks <meta charset=\"gbk\"> or %q: %.200s", id, want, body)
			}
			if strings.Contains(string(raw), "第") {
				t.Errorf("detail %d is UTF-8, want GBK bytes", id)
			}
		}
	})
	t.Run("unknown paths answer 404", func(t *testing.T) {
		for _, p := range []string{"/list/16", "/list/0", "/list/x", "/detail/301", "/detail/0", "/nope", "/robots.txt"} {
			if resp, _ := get(t, srv.URL+p); resp.StatusCode != 404 {
				t.Errorf("GET %s = %d, want 404", p, resp.StatusCode)
			}
		}
	})
}

func TestArticleFor(t *testing.T) {
	t.Run("deterministic", func(t *testing.T) {
		if a, b := ArticleFor(42), ArticleFor(42); !reflect.DeepEqual(a, b) {
			t.Errorf("ArticleFor(42) differs between calls")
		}
		if ArticleFor(42).Body == ArticleFor(43).Body {
			t.Errorf("articles 42 and 43 share a body")
		}
	})
	t.Run("every 25th is a near-duplicate of the one before", func(t *testing.T) {
		for _, id := range []int{25, 50, 75, 100} {
			a, b := strings.Fields(ArticleFor(id).Body), strings.Fields(ArticleFor(id-1).Body)
			if len(a) != len(b) {
				t.Fatalf("article %d has %d words, %d has %d", id, len(a), id-1, len(b))
			}
			diff := 0
			for i := range a {
				if a[i] != b[i] {
					diff++
				}
			}
			if diff > 1 {
				t.Errorf("article %d differs from %d in %d words, want at most 1", id, id-1, diff)
			}
		}
	})
	t.Run("id%50 == 7 is Chinese", func(t *testing.T) {
		a := ArticleFor(107)
		if !strings.HasPrefix(a.Title, "第107条") || strings.ContainsAny(a.Body, "abcdefghijklmnopqrstuvwxyz") {
			t.Errorf("article 107 = %q / %.40q, want Chinese", a.Title, a.Body)
		}
	})
}

func TestJobYAML(t *testing.T) {
	spec, err := jobspec.Parse(strings.NewReader(JobYAML("demo", "http://127.0.0.1:8080")))
	if err != nil {
		t.Fatalf("ParseJobSpec(JobYAML): %v", err)
	}
	if spec.Name != "demo" || !reflect.DeepEqual(spec.Seeds, []string{"http://127.0.0.1:8080/list/1"}) ||
		!spec.AllowPrivateNetworks || !reflect.DeepEqual(spec.AllowedDomains, []string{"127.0.0.1"}) ||
		spec.MaxRetries != 2 || len(spec.Fields) != 4 || !spec.Fields["tags"].All {
		t.Errorf("spec = %+v", spec)
	}
}

func TestSite_FirstID(t *testing.T) {
	s, srv := serve(t, Options{Details: 60, FirstID: 1001, GoneEvery: -1, FlakyEvery: -1})
	_, details, _ := crawl(t, srv)
	want := map[string]bool{}
	for id := 1001; id <= 1060; id++ {
		want[CanonicalPath(id)] = true
	}
	got := map[string]bool{}
	for p := range details {
		got[p] = true
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("details linked = %d pages %v, want IDs 1001..1060", len(got), got)
	}
	if len(s.Expected()) != 60 || s.Expected()[CanonicalPath(1001)] != Stored {
		t.Errorf("Expected = %d pages, want 1001..1060 stored", len(s.Expected()))
	}
	for _, id := range []int{1000, 1061, 1} {
		if resp, _ := get(t, srv.URL+CanonicalPath(id)); resp.StatusCode != 404 {
			t.Errorf("detail %d outside the range answers %d, want 404", id, resp.StatusCode)
		}
	}
}

func TestSite_PageBytes(t *testing.T) {
	const size = 200_000
	_, srv := serve(t, Options{PageBytes: size, FlakyEvery: -1})
	for _, id := range []int{12, 57} { // 57 is served in GBK
		resp, raw := get(t, srv.URL+CanonicalPath(id))
		if resp.StatusCode != 200 || len(raw) < size || len(raw) > size+len(fillerParagraph)+200 {
			t.Errorf("detail %d: %d with %d bytes, want 200 with about %d", id, resp.StatusCode, len(raw), size)
		}
		body := raw
		if id == 57 {
			body, _ = simplifiedchinese.GBK.NewDecoder().Bytes(raw)
		}
		doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		a := ArticleFor(id)
		if got := doc.Find("h1").Text(); got != a.Title {
			t.Errorf("detail %d h1 = %q, want %q", id, got, a.Title)
		}
		if got := doc.Find("#content").Text(); got != a.Body {
			t.Errorf("detail %d #content is not the article body alone: %.80q", id, got)
		}
		if n := doc.Find("p.filler").Length(); n == 0 || !strings.HasSuffix(string(body), "</body></html>\n") {
			t.Errorf("detail %d: %d filler paragraphs, ends %q", id, n, body[len(body)-20:])
		}
	}
	_, plain := serve(t, Options{FlakyEvery: -1})
	if _, raw := get(t, plain.URL+CanonicalPath(12)); bytes.Contains(raw, []byte("filler")) {
		t.Errorf("a site without PageBytes pads its pages")
	}
}

func TestJob_YAML(t *testing.T) {
	j := Job{Name: "multi", Seeds: []string{"http://127.0.0.1:81/list/1", "http://127.0.0.2:82/list/1"},
		AllowedDomains: []string{"127.0.0.1", "127.0.0.2"}, PerHostRPS: 10000, PerHostConcurrency: 1000, Capacity: 5000}
	spec, err := jobspec.Parse(strings.NewReader(j.YAML()))
	if err != nil {
		t.Fatalf("ParseJobSpec: %v\n%s", err, j.YAML())
	}
	if !reflect.DeepEqual(spec.Seeds, j.Seeds) || !reflect.DeepEqual(spec.AllowedDomains, j.AllowedDomains) ||
		spec.PerHostRPS != 10000 || spec.PerHostConcurrency != 1000 || spec.Dedup.Capacity != 5000 {
		t.Errorf("spec = %+v", spec)
	}
	if !spec.AllowsHost("127.0.0.2") || spec.AllowsHost("127.0.0.3") {
		t.Errorf("allowed domains not as given: %v", spec.AllowedDomains)
	}
	j.PerHostRPS, j.PerHostConcurrency = 0, 0
	if strings.Contains(j.YAML(), "per_host") {
		t.Errorf("a job with no budget of its own sets one:\n%s", j.YAML())
	}
	def := jobspec.Default()
	if spec, err := jobspec.Parse(strings.NewReader(j.YAML())); err != nil || spec.PerHostRPS != def.PerHostRPS ||
		spec.PerHostConcurrency != def.PerHostConcurrency {
		t.Errorf("a job with no budget of its own = %+v, %v; want the job file's defaults", spec, err)
	}
}

// TestSite_robotsAndPDF: with DisallowEvery, robots.txt disallows exactly
// every n-th detail page, however its link is spelled, and nothing else;
// with PDFEvery, every n-th detail page is a PDF. Expected says so.
func TestSite_robotsAndPDF(t *testing.T) {
	s, srv := serve(t, Options{Details: 60, DisallowEvery: 10, PDFEvery: 7, GoneEvery: 11, FlakyEvery: -1})
	resp, body := get(t, srv.URL+"/robots.txt")
	if resp.StatusCode != 200 {
		t.Fatalf("robots.txt answers %d", resp.StatusCode)
	}
	file := robots.Parse(body)
	r := httptest.NewRequest(http.MethodGet, srv.URL+"/list/1", nil)
	for id := 1; id <= 60; id++ {
		for k := 0; k < 5; k++ {
			link, err := canon.Ref(mustParse(t, srv.URL+"/list/2"), variant(r, id, k))
			if err != nil {
				t.Fatal(err)
			}
			path := robots.PathOf(mustParse(t, link))
			if allowed := file.Allowed("crawler", path); allowed == (id%10 == 0) {
				t.Errorf("detail %d spelled %q: allowed %v, want %v", id, path, allowed, id%10 != 0)
			}
		}
	}
	if !file.Allowed("crawler", "/list/1") {
		t.Error("robots.txt disallows the list pages")
	}
	// Gone comes before PDF, robots.txt before both (none of 1..60 is both here).
	for id, want := range map[int]Outcome{10: Disallowed, 14: NotHTML, 11: Gone, 12: Stored, 30: Disallowed} {
		if got := s.Expected()[CanonicalPath(id)]; got != want {
			t.Errorf("Expected[%d] = %v, want %v", id, got, want)
		}
	}
	resp, body = get(t, srv.URL+CanonicalPath(14))
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "application/pdf" || !bytes.HasPrefix(body, []byte("%PDF-")) {
		t.Errorf("detail 14: %d %s %.10q, want a PDF", resp.StatusCode, ct, body)
	}
	if resp, _ := get(t, srv.URL+CanonicalPath(10)); resp.StatusCode != 200 {
		t.Errorf("a disallowed page answers %d; robots.txt asks, the server still serves", resp.StatusCode)
	}
}

// TestSite_Tally: the counters Tally promises are what a breadth-first
// crawl of the site finds, link by link, and they add up.
func TestSite_Tally(t *testing.T) {
	for _, opts := range []Options{{}, {Details: 200, DisallowEvery: 9, PDFEvery: 13}} {
		t.Run(fmt.Sprintf("%+v", opts), func(t *testing.T) {
			s, srv := serve(t, opts)
			_, details, offsite := crawl(t, srv)
			var want Tally
			want.Offsite = offsite
			for path, links := range details {
				switch s.Expected()[path] {
				case Disallowed:
					want.RobotsDisallowed += links
					continue
				case Stored:
					want.Stored++
				case Gone:
					want.Failed++
				case NotHTML:
					want.SkippedNotHTML++
				}
				want.Discovered += links
				want.Duplicates += links - 1
			}
			got := s.Tally()
			if got != want {
				t.Errorf("Tally = %+v, the crawl found %+v", got, want)
			}
			if got.Discovered != got.Stored+got.Failed+got.SkippedNotHTML+got.Duplicates {
				t.Errorf("Tally does not add up: %+v", got)
			}
			if opts.DisallowEvery > 0 && (got.RobotsDisallowed == 0 || got.SkippedNotHTML == 0) {
				t.Errorf("Tally = %+v: the options should make robots_disallowed and skipped_not_html non-zero", got)
			}
		})
	}
}

func mustParse(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestSite_RedirectLoop: with Options.RedirectLoop every list page links
// /loop/1 as an item, the loop goes round in 302s, and Tally counts its
// links discovered and the loop failed; without it there is no loop.
func TestSite_RedirectLoop(t *testing.T) {
	opts := Options{Details: 40, PerPage: 10, Overlap: -1, GoneEvery: -1, FlakyEvery: -1, RedirectLoop: true}
	s, srv := serve(t, opts)
	_, details, _ := crawl(t, srv)
	if details["/loop/1"] != s.ListPages() {
		t.Errorf("/loop/1 linked %d times, want once per list page (%d)", details["/loop/1"], s.ListPages())
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for from, to := range map[string]string{"/loop/1": "/loop/2", "/loop/2": "/loop/3", "/loop/3": "/loop/1"} {
		resp, err := noFollow.Get(srv.URL + from)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != to {
			t.Errorf("%s answers %d to %q, want 302 to %s", from, resp.StatusCode, resp.Header.Get("Location"), to)
		}
	}
	opts.RedirectLoop = false
	plain := New(opts).Tally()
	want := plain
	want.Discovered, want.Failed, want.Duplicates = plain.Discovered+s.ListPages(), plain.Failed+1, plain.Duplicates+s.ListPages()-1
	if got := s.Tally(); got != want {
		t.Errorf("Tally with the loop = %+v, want %+v", got, want)
	}
	_, plainSrv := serve(t, opts)
	if resp, _ := get(t, plainSrv.URL+"/loop/1"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("/loop/1 without RedirectLoop answers %d, want 404", resp.StatusCode)
	}
}
