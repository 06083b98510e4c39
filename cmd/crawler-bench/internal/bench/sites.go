package bench

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"

	"github.com/crawler-dev/crawler/internal/demosite"
)

// MaxHosts is the most loopback hosts a benchmark site spreads over:
// 127.0.0.1 to 127.0.0.254.
const MaxHosts = 254

// hostSites is a demo site spread over loopback hosts 127.0.0.1,
// 127.0.0.2, ...: each host is a host of its own to the crawler's
// politeness budget, which keys hosts by name without the port. Each
// serves its own range of detail IDs, so no two hosts serve one article.
type hostSites struct {
	sites   []*demosite.Site // the demo sites, when serveHosts served them
	hosts   []string         // "127.0.0.1", ...
	bases   []string         // "http://127.0.0.1:port"
	servers []*http.Server
	wg      sync.WaitGroup
}

// serveHosts serves opts.Details detail pages split over n hosts.
func serveHosts(n int, opts demosite.Options) (*hostSites, error) {
	h := &hostSites{}
	per := (opts.Details + n - 1) / n
	for i := range n {
		o := opts
		o.FirstID = 1 + i*per
		o.Details = min(per, opts.Details-i*per)
		if o.Details <= 0 {
			break
		}
		site := demosite.New(o)
		if err := h.serve("127.0.0."+strconv.Itoa(i+1), site); err != nil {
			h.Close()
			return nil, err
		}
		h.sites = append(h.sites, site)
	}
	return h, nil
}

// serve serves handler on host, at a port of its own.
func (h *hostSites) serve(host string, handler http.Handler) error {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return fmt.Errorf("serve the demo site on %s: %w", host, err)
	}
	srv := &http.Server{Handler: handler}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		_ = srv.Serve(ln)
	}()
	h.hosts = append(h.hosts, host)
	h.bases, h.servers = append(h.bases, "http://"+ln.Addr().String()), append(h.servers, srv)
	return nil
}

// seeds are the first list page of every host, or every list page of
// every host when all is set.
func (h *hostSites) seeds(all bool) []string {
	var out []string
	for i, s := range h.sites {
		last := 1
		if all {
			last = s.ListPages()
		}
		for n := 1; n <= last; n++ {
			out = append(out, h.bases[i]+"/list/"+strconv.Itoa(n))
		}
	}
	return out
}

// Close stops the servers and waits for them.
func (h *hostSites) Close() {
	for _, s := range h.servers {
		_ = s.Close()
	}
	h.wg.Wait()
}
