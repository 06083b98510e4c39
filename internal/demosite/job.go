package demosite

import (
	"encoding/json"
	"fmt"
	"strings"
)

// JobYAML is a job file for the site at baseURL (e.g. http://127.0.0.1:8080).
// The demo site is our own, on loopback: it can take more than the polite
// default of 5 requests per second per host.
func JobYAML(name, baseURL string) string {
	return Job{Name: name, Seeds: []string{baseURL + "/list/1"},
		PerHostRPS: 1000, PerHostConcurrency: 32, Capacity: 100_000}.YAML()
}

// Job is a job file for the demo site served on one host or several.
type Job struct {
	// Name is the job's name.
	Name string
	// Seeds are the first list pages, e.g. every host's /list/1.
	Seeds []string
	// AllowedDomains are the hosts followed; empty means the seeds' hosts.
	AllowedDomains []string
	// PerHostRPS and PerHostConcurrency are the job's politeness budget
	// per host; zero leaves each out of the file, to the job file's
	// defaults.
	PerHostRPS         float64
	PerHostConcurrency int
	// Capacity is the dupefilter's capacity per time slice.
	Capacity int64
}

// YAML renders the job file: the demo site's link and field rules, its
// seeds and domains, two retries, and the politeness budget it sets.
func (j Job) YAML() string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\nseeds: %s\n", j.Name, flowList(j.Seeds))
	if len(j.AllowedDomains) > 0 {
		fmt.Fprintf(&b, "allowed_domains: %s\n", flowList(j.AllowedDomains))
	}
	fmt.Fprintf(&b, `allow_private_networks: true
next_link:   {css: "a.next", attr: href}
detail_link: {css: ".item a", attr: href}
fields:
  title: {css: "h1"}
  body:  {css: "#content"}
  tags:  {css: ".tag", all: true}
  image: {css: "img.main", attr: src}
dedup: {window: 168h, granularity: 24h, capacity: %d, error_rate: 0.001}
max_retries: 2
`, j.Capacity)
	if j.PerHostRPS != 0 {
		fmt.Fprintf(&b, "per_host_rps: %g\n", j.PerHostRPS)
	}
	if j.PerHostConcurrency != 0 {
		fmt.Fprintf(&b, "per_host_concurrency: %d\n", j.PerHostConcurrency)
	}
	return b.String()
}

// flowList writes strings as a YAML flow sequence (JSON is YAML).
func flowList(items []string) string {
	if items == nil {
		items = []string{}
	}
	out, _ := json.Marshal(items)
	return string(out)
}
