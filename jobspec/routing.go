package jobspec

import "fmt"

// Routing modes of a job's item pages: how the master chooses the slave
// that fetches each one.
const (
	// RoutingAuto routes by host when the per-host rate is low enough
	// that one slave serves a host's whole budget (HostRoutingMaxRPS),
	// else by URL.
	RoutingAuto = "auto"
	// RoutingHost routes every page of one host to the same slave.
	RoutingHost = "host"
	// RoutingURL routes each page by its own fingerprint, spreading one
	// host's pages over every slave.
	RoutingURL = "url"
)

// HostRoutingMaxRPS is the highest per_host_rps that routing: auto routes
// by host. At or below it a host's requests are evenly spaced (a burst of
// one), so a host needs one slave's time for a few milliseconds a
// request: spreading it over more slaves buys the site nothing and costs
// every slave a share of the host's budget in Redis.
const HostRoutingMaxRPS = 20

// RoutesByHost reports whether the job's item pages are routed by host:
// every page of a host to one slave, which alone then draws on the host's
// budget beside the master (the model of Nutch's and StormCrawler's
// byHost partitioning). Otherwise each page goes where its fingerprint
// routes it.
func (r RequestSpec) RoutesByHost() bool {
	switch r.Routing {
	case RoutingHost:
		return true
	case RoutingURL:
		return false
	}
	return r.PerHostRPS <= HostRoutingMaxRPS // 0: Crawl-delay or the default, both below it
}

func (r RequestSpec) validateRouting() error {
	switch r.Routing {
	case "", RoutingAuto, RoutingHost, RoutingURL:
		return nil
	}
	return fmt.Errorf("routing: %q is not one of auto, host, url", r.Routing)
}
