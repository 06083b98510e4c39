package bench

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/crawler-dev/crawler/internal/demosite"
	"github.com/crawler-dev/crawler/jobspec"
)

// MaxManyHosts is the most hosts the many-host site serves: as many as a
// job may allow (allowed_domains), far fewer than 127.0.0.0/8 holds.
const MaxManyHosts = jobspec.MaxAllowedDomains

// loopbackHost is the i-th host of the many-host site (i from 0):
// 127.0.0.2 to 127.0.0.254, then 127.0.1.1 to 127.0.1.254, and so on,
// never .0 or .255 in the last octet, and never 127.0.0.1, where Redis
// and the crawler's own listeners are. Linux routes all of 127.0.0.0/8
// to the loopback interface, so each binds without setup.
func loopbackHost(i int) string {
	n := i + 1 // 127.0.0.1 is the sequence's first, left out
	return fmt.Sprintf("127.0.%d.%d", n/254, n%254+1)
}

// manySites is many small demo sites served by this process, one per
// loopback address, each a host of its own to the crawler's politeness
// budget and each serving its own range of detail IDs, with a robots.txt
// that allows everything. Every request is recorded, per host, as the
// site saw it (hostLog).
type manySites struct {
	*hostSites
	logs []*hostLog
}

// serveManySites serves n sites of opts each, the i-th with detail IDs
// from 1 + i·opts.Details.
func serveManySites(n int, opts demosite.Options) (*manySites, error) {
	m := &manySites{hostSites: &hostSites{}}
	start := time.Now()
	for i := range n {
		o := opts
		o.FirstID = 1 + i*opts.Details
		site := demosite.New(o)
		log := &hostLog{start: start}
		if err := m.serve(loopbackHost(i), &loggedSite{site: site, log: log, delay: opts.Delay}); err != nil {
			m.Close()
			return nil, err
		}
		m.sites, m.logs = append(m.sites, site), append(m.logs, log)
	}
	return m, nil
}

// view is what every host saw so far, its busiest second timed from the
// first request any host saw; read it once the crawl is over.
func (m *manySites) view() SiteView {
	v := SiteView{Hosts: make([]HostView, len(m.logs))}
	reqs := make([][]siteRequest, len(m.logs))
	first := time.Duration(math.MaxInt64)
	for i, l := range m.logs {
		reqs[i] = l.requests()
		for _, r := range reqs[i] {
			first = min(first, r.arrived)
		}
	}
	for i := range reqs {
		v.Hosts[i] = viewOf(m.hosts[i], reqs[i])
		v.Hosts[i].BusiestAt -= first
	}
	return v
}

// expectedURLs are the detail pages a correct crawl stores, as host:port
// and canonical path and query ("127.0.0.2:41000/detail/7?cat=...").
func (m *manySites) expectedURLs() map[string]bool {
	out := map[string]bool{}
	for i, s := range m.sites {
		hostPort := m.bases[i][len("http://"):]
		for path, outcome := range s.Expected() {
			if outcome == demosite.Stored {
				out[hostPort+path] = true
			}
		}
	}
	return out
}

// hostLog records the requests one host served: a mutex and an append per
// request, the views worked out once at the end.
type hostLog struct {
	start time.Time
	mu    sync.Mutex
	reqs  []siteRequest
}

func (l *hostLog) add(r siteRequest) {
	l.mu.Lock()
	l.reqs = append(l.reqs, r)
	l.mu.Unlock()
}

// requests returns a copy of the requests recorded so far.
func (l *hostLog) requests() []siteRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]siteRequest(nil), l.reqs...)
}

// allowAll is the sites' robots.txt: everything allowed, no Crawl-delay,
// so that the job's rate is the crawler's default.
const allowAll = "User-agent: *\nAllow: /\n"

// loggedSite serves one host: its robots.txt (after the site's latency,
// like every response), then the demo site, and records each request from
// the moment its handler starts (before the latency) until it returns, or
// until it gives the connection up to reset it.
type loggedSite struct {
	site  *demosite.Site
	log   *hostLog
	delay time.Duration
}

func (s *loggedSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	arrived := time.Since(s.log.start)
	cw := &countedWriter{ResponseWriter: w, done: func() {
		s.log.add(siteRequest{arrived: arrived, left: time.Since(s.log.start), path: r.URL.Path})
	}}
	defer cw.leave()
	if r.URL.Path == "/robots.txt" {
		s.serveRobots(w, r)
		return
	}
	s.site.ServeHTTP(cw, r)
}

func (s *loggedSite) serveRobots(w http.ResponseWriter, r *http.Request) {
	select {
	case <-time.After(s.delay):
	case <-r.Context().Done():
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, allowAll)
}
