package demosite

import (
	"fmt"
	"html"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/text/encoding/simplifiedchinese"
)

// Options shapes the site. Zero values take the defaults.
type Options struct {
	// Details is the number of unique detail pages (default 300).
	Details int
	// PerPage is how many detail links a list page shows (default 25).
	PerPage int
	// Overlap is how many links a list page repeats from the previous one
	// (default 5; <0 none), so details are linked more than once. It is
	// kept below PerPage, so every list page brings new links.
	Overlap int
	// GoneEvery makes every n-th detail page answer 404 (default 101; <0 none).
	GoneEvery int
	// FlakyEvery makes every n-th detail page answer 503 once (default 37;
	// <0 none).
	FlakyEvery int
	// Delay is added to every response, like a real site's latency, so
	// tests can act while a crawl is in progress.
	Delay time.Duration
	// FirstID is the first detail page's ID (default 1): the site serves
	// FirstID..FirstID+Details-1. A site spread over several hosts gives
	// each host a range of its own, so no two hosts serve one article.
	FirstID int
	// PageBytes pads every detail page to at least this many bytes with
	// paragraphs outside the extracted fields, like a real site's heavy
	// markup (0: no padding).
	PageBytes int
	// DisallowEvery makes the site's robots.txt disallow every n-th detail
	// page (0, the default: the site has no robots.txt, 404). A crawl that
	// obeys robots.txt never fetches them; the master counts each link to
	// one as robots_disallowed.
	DisallowEvery int
	// PDFEvery serves every n-th detail page as a PDF (0, the default:
	// none): fetched, it is skipped as not HTML (skipped_not_html).
	PDFEvery int
	// NextLinks is how many following list pages each list page links
	// (default 1): with 3, list page n links n+1, n+2 and n+3, so a
	// breadth-first walk from the first page is about ListPages/3 levels
	// deep.
	NextLinks int
	// FaultEvery makes every n-th detail page faulty (0, the default:
	// none), the faults taken in turn: a 404, a 503 once, a 503 twice, a
	// connection reset once, and a stall of Stall before the page.
	FaultEvery int
	// Stall is how long a stalling page waits before it answers (default
	// 1s).
	Stall time.Duration
	// RedirectLoop makes every list page link /loop/1 among its items, as
	// it links detail pages, and serves a loop of 302s there: /loop/1 →
	// /loop/2 → /loop/3 → /loop/1. A crawl fails it, with a reason.
	RedirectLoop bool
}

func (o *Options) applyDefaults() {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.Details, 300)
	def(&o.PerPage, 25)
	def(&o.Overlap, 5)
	o.Overlap = min(max(o.Overlap, 0), o.PerPage-1)
	def(&o.GoneEvery, 101)
	def(&o.FlakyEvery, 37)
	def(&o.FirstID, 1)
	def(&o.NextLinks, 1)
	if o.Stall == 0 {
		o.Stall = time.Second
	}
}

// Site is the demo site; it is an http.Handler.
type Site struct {
	opts   Options
	filler []byte // PageBytes of padding paragraphs, cut per page
	mu     sync.Mutex
	flaky  map[int]int // failures each flaky page has answered so far
	hits   map[string]int
	healed bool // gone pages are back
}

// Heal brings the gone pages back, as a site does after an outage: they
// serve their articles from now on, and Expected counts them as stored.
func (s *Site) Heal() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.healed = true
}

// New returns a site.
func New(opts Options) *Site {
	opts.applyDefaults()
	return &Site{opts: opts, filler: filler(opts.PageBytes), flaky: map[int]int{}, hits: map[string]int{}}
}

// fillerParagraph is one paragraph of padding; every copy has its length.
const fillerParagraph = "<p class=\"filler\">Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.</p>\n"

// filler returns enough paragraphs to pad a page to n bytes.
func filler(n int) []byte {
	if n <= 0 {
		return nil
	}
	return []byte(strings.Repeat(fillerParagraph, (n+len(fillerParagraph)-1)/len(fillerParagraph)))
}

// lastID is the ID of the last detail page.
func (s *Site) lastID() int { return s.opts.FirstID + s.opts.Details - 1 }

// ListPages is the number of list pages.
func (s *Site) ListPages() int {
	step := s.opts.PerPage - s.opts.Overlap
	return max(1, (s.opts.Details-s.opts.Overlap+step-1)/step)
}

// ServeHTTP serves /list/N and /detail/ID.
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits[r.URL.Path]++
	s.mu.Unlock()
	if s.opts.Delay > 0 {
		select {
		case <-time.After(s.opts.Delay):
		case <-r.Context().Done():
			return
		}
	}
	switch {
	case r.URL.Path == "/" || r.URL.Path == "/list":
		http.Redirect(w, r, "/list/1", http.StatusFound)
	case strings.HasPrefix(r.URL.Path, "/list/"):
		s.serveList(w, r)
	case strings.HasPrefix(r.URL.Path, "/detail/"):
		s.serveDetail(w, r)
	case strings.HasPrefix(r.URL.Path, "/loop/") && s.opts.RedirectLoop:
		s.serveLoop(w, r)
	case r.URL.Path == "/robots.txt" && s.opts.DisallowEvery > 0:
		s.serveRobots(w)
	default:
		http.NotFound(w, r)
	}
}

// Hits returns how often path was requested.
func (s *Site) Hits(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

func pathID(path, prefix string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(path, prefix))
	return n, err == nil && n > 0
}

// detailsOn returns the detail IDs list page n links to.
func (s *Site) detailsOn(n int) []int {
	step := s.opts.PerPage - s.opts.Overlap
	first := s.opts.FirstID + (n-1)*step
	var ids []int
	for id := first; id < first+s.opts.PerPage && id <= s.lastID(); id++ {
		ids = append(ids, id)
	}
	return ids
}

func (s *Site) serveList(w http.ResponseWriter, r *http.Request) {
	n, ok := pathID(r.URL.Path, "/list/")
	if !ok || n > s.ListPages() {
		http.NotFound(w, r)
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html><html><head><title>News, page %d</title></head><body>\n<ul class=\"items\">\n", n)
	for i, id := range s.detailsOn(n) {
		fmt.Fprintf(&b, "<li class=\"item\"><a href=\"%s\">Item %d</a></li>\n", html.EscapeString(variant(r, id, i+n)), id)
	}
	if s.opts.RedirectLoop {
		b.WriteString("<li class=\"item\"><a href=\"/loop/1\">Going round</a></li>\n")
	}
	// An offsite ad among the items: counted as offsite, never fetched.
	fmt.Fprintf(&b, "<li class=\"item sponsored\"><a href=\"https://ads.example.net/click?page=%d\">ad</a></li>\n</ul>\n", n)
	if n > 1 {
		fmt.Fprintf(&b, "<a class=\"prev\" href=\"/list/%d\">prev</a>\n", n-1)
	}
	if n < s.ListPages() {
		// The next page twice, spelled two ways: the frontier must queue it once.
		fmt.Fprintf(&b, "<a class=\"next\" href=\"/list/%d\">next</a> <a class=\"next\" href=\"/list/%d#top\">also next</a>\n", n+1, n+1)
	}
	for k := n + 2; k <= min(n+s.opts.NextLinks, s.ListPages()); k++ {
		fmt.Fprintf(&b, "<a class=\"next\" href=\"/list/%d\">page %d</a>\n", k, k)
	}
	b.WriteString("</body></html>\n")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write([]byte(b.String()))
}

// CanonicalPath is the canonical path and query of detail id.
func CanonicalPath(id int) string {
	return fmt.Sprintf("/detail/%d?cat=%s&lang=en", id, category(id))
}

func category(id int) string { return []string{"world", "tech", "sport", "arts"}[id%4] }

// variant spells detail id's URL in one of several equivalent ways.
func variant(r *http.Request, id, k int) string {
	switch k % 5 {
	case 1:
		return fmt.Sprintf("/detail/%d?lang=en&cat=%s", id, category(id)) // query order
	case 2:
		return CanonicalPath(id) + "#comments" // fragment
	case 3:
		return "http://" + strings.ToUpper(r.Host) + CanonicalPath(id) // absolute, host case
	case 4:
		return "../detail/" + strings.TrimPrefix(CanonicalPath(id), "/detail/") // relative
	default:
		return CanonicalPath(id)
	}
}

// Outcome is what a correct crawl records for a detail page.
type Outcome int

// Outcomes of a detail page.
const (
	Stored     Outcome = iota
	Gone               // answers 404: recorded as failed
	Disallowed         // robots.txt disallows it (Options.DisallowEvery): never fetched, not discovered
	NotHTML            // a PDF (Options.PDFEvery): skipped as not HTML
)

// Expected returns every detail page's canonical path+query and outcome.
func (s *Site) Expected() map[string]Outcome {
	out := make(map[string]Outcome, s.opts.Details)
	for id := s.opts.FirstID; id <= s.lastID(); id++ {
		out[CanonicalPath(id)] = s.outcome(id)
	}
	return out
}

// outcome is what a correct crawl records for detail id.
func (s *Site) outcome(id int) Outcome {
	switch {
	case s.disallowed(id):
		return Disallowed
	case s.gone(id):
		return Gone
	case s.pdf(id):
		return NotHTML
	}
	return Stored
}

func (s *Site) disallowed(id int) bool {
	return s.opts.DisallowEvery > 0 && id%s.opts.DisallowEvery == 0
}

func (s *Site) pdf(id int) bool { return s.opts.PDFEvery > 0 && id%s.opts.PDFEvery == 0 }

func (s *Site) gone(id int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.healed && (s.opts.GoneEvery > 0 && id%s.opts.GoneEvery == 0 || s.fault(id) == faultGone)
}

func (s *Site) serveDetail(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(r.URL.Path, "/detail/")
	if !ok || id < s.opts.FirstID || id > s.lastID() || s.gone(id) {
		http.NotFound(w, r)
		return
	}
	if s.failOnce(id) {
		http.Error(w, "try again", http.StatusServiceUnavailable)
		return
	}
	if s.injectFault(w, r, id) {
		return
	}
	if s.pdf(id) {
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = fmt.Fprintf(w, "%%PDF-1.4\n%% article %d\n%%%%EOF\n", id)
		return
	}
	page := ArticleFor(id).HTML()
	head, tail, _ := strings.Cut(page, "</body>")
	tail = "</body>" + tail
	if id%50 == 7 { // one page in fifty is served in GBK
		head, _ = simplifiedchinese.GBK.NewEncoder().String(strings.Replace(head, "utf-8", "gbk", 1))
		w.Header().Set("Content-Type", "text/html; charset=gbk")
	} else {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
	}
	_, _ = io.WriteString(w, head)
	_, _ = w.Write(s.padding(len(head) + len(tail)))
	_, _ = io.WriteString(w, tail)
}

// padding is the filler that brings a page of n bytes to PageBytes: whole
// paragraphs, ASCII, so the same bytes serve a GBK page.
func (s *Site) padding(n int) []byte {
	need := s.opts.PageBytes - n
	if need <= 0 {
		return nil
	}
	paras := (need + len(fillerParagraph) - 1) / len(fillerParagraph)
	return s.filler[:min(paras*len(fillerParagraph), len(s.filler))]
}

// serveRobots serves a robots.txt disallowing every DisallowEvery-th
// detail page: "Disallow: /detail/ID?" matches that page however its
// query is spelled, and no other.
func (s *Site) serveRobots(w http.ResponseWriter) {
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for id := s.opts.FirstID; id <= s.lastID(); id++ {
		if s.disallowed(id) {
			fmt.Fprintf(&b, "Disallow: /detail/%d?\n", id)
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, b.String())
}

func (s *Site) failOnce(id int) bool {
	if s.opts.FlakyEvery <= 0 || id%s.opts.FlakyEvery != 0 {
		return false
	}
	return s.failFirst(id, 1)
}

// failFirst reports whether detail id is to fail this time: its first
// n requests fail, later ones are served.
func (s *Site) failFirst(id, n int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.flaky[id] >= n {
		return false
	}
	s.flaky[id]++
	return true
}

// loopLength is the number of pages in the redirect loop.
const loopLength = 3

// serveLoop answers /loop/N with a 302 to the next page of the loop.
func (s *Site) serveLoop(w http.ResponseWriter, r *http.Request) {
	n, ok := pathID(r.URL.Path, "/loop/")
	if !ok || n > loopLength {
		http.NotFound(w, r)
		return
	}
	http.Redirect(w, r, "/loop/"+strconv.Itoa(n%loopLength+1), http.StatusFound)
}
