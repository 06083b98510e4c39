package jobspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Job is a crawl job as a user writes it in a job file: where to start,
// how to find list and detail pages, what to extract, how politely, and how
// long a detail page counts as seen. docs/job-file.md documents every field.
type Job struct {
	// Name is the job's identity: lowercase letters, digits, '_' and '-'.
	Name string `yaml:"name" json:"name"`
	// Seeds are the first pages, of kind start unless SeedKinds names
	// another. Submitting stores them apart from the spec (cluster.JobKeys.Seeds),
	// so a job of a million seeds costs the processes that load its spec
	// nothing. A job file's seeds are read through SeedList.
	Seeds []string `yaml:"-" json:"seeds,omitempty"`
	// SeedList is the seeds as a job file gives them: URLs, or {url, kind}.
	// Parse moves it into Seeds and SeedKinds and leaves it empty.
	SeedList []Seed `yaml:"seeds" json:"-"`
	// SeedKinds maps the seeds given with a kind to it; a seed not in it
	// is of kind start (see SeedKind).
	SeedKinds map[string]string `yaml:"-" json:"seed_kinds,omitempty"`
	// AllowedDomains limits the hosts followed; empty means the seeds' hosts.
	// A domain also allows its subdomains.
	AllowedDomains []string `yaml:"allowed_domains" json:"allowed_domains,omitempty"`
	// AllowPrivateNetworks must be true to fetch loopback or private addresses.
	AllowPrivateNetworks bool `yaml:"allow_private_networks" json:"allow_private_networks,omitempty"`
	// NextLink finds the next list pages, followed breadth-first.
	NextLink *LinkRule `yaml:"next_link" json:"next_link,omitempty"`
	// DetailLink finds the detail pages on a list page.
	DetailLink *LinkRule `yaml:"detail_link" json:"detail_link"`
	// Fields are extracted from each detail page.
	Fields map[string]FieldRule `yaml:"fields" json:"fields"`
	// Kinds are the job's page kinds, by name. Empty means the short form
	// above (NextLink, DetailLink, Fields); PageKinds returns either as
	// kinds.
	Kinds map[string]PageKind `yaml:"kinds" json:"kinds,omitempty"`
	// Sitemaps are sitemaps whose pages are crawled as the kind each
	// entry names.
	Sitemaps []SitemapRule `yaml:"sitemaps" json:"sitemaps,omitempty"`
	// MaxDepth limits the list-page BFS depth (seeds are depth 0); 0 means none.
	MaxDepth int `yaml:"max_depth" json:"max_depth,omitempty"`
	// Dedup configures the detail-page dupefilter.
	Dedup DedupSpec `yaml:"dedup" json:"dedup"`
	// RecrawlEvery re-seeds the job periodically; 0 crawls once. Every
	// round visits every detail page it finds (the dupefilter
	// deduplicates within a round), or those due with Recrawl.
	RecrawlEvery Duration `yaml:"recrawl_every" json:"recrawl_every,omitempty"`
	// Schedule starts a round at the times of a cron expression (UTC, or
	// "CRON_TZ=Zone ..."); exclusive with RecrawlEvery. See NextRound.
	Schedule string `yaml:"schedule" json:"schedule,omitempty"`
	// Recrawl, when set, has a round check only the known pages that are
	// due, each page's interval learned from its history.
	Recrawl *Recrawl `yaml:"recrawl" json:"recrawl,omitempty"`
	// Conditional re-fetches a stored page with its validators
	// (If-None-Match, If-Modified-Since); nil means true. See
	// SendsValidators.
	Conditional *bool `yaml:"conditional" json:"conditional,omitempty"`
	// Budget bounds what one round may cost: pages, pages per host, bytes,
	// time.
	Budget Budget `yaml:"budget" json:"budget,omitempty"`
	// MaxRetries is how often a transient fetch error is retried; 0 means
	// one request per page.
	MaxRetries int `yaml:"max_retries" json:"max_retries"`
	// RequestSpec holds how pages are requested: politeness, headers,
	// limits. Its fields sit at the top level of a job file.
	RequestSpec `yaml:",inline"`
	// RenderSpec renders every kind's pages in a headless browser, unless
	// a kind says otherwise. Its fields sit at the top level of a job file.
	RenderSpec `yaml:",inline"`
	// Priority orders the job against the others on the same slaves:
	// a slave takes a higher one's tasks first (with aging, so a lower
	// one is never starved). 0 by default.
	Priority int `yaml:"priority" json:"priority,omitempty"`
	// Notify are the webhooks told of the job's transitions.
	Notify []Webhook `yaml:"notify" json:"notify,omitempty"`
	// SeedCount is the number of seeds stored apart from the spec; it is
	// set by submission and not read from job files.
	SeedCount int `yaml:"-" json:"seed_count,omitempty"`
}

// RequestSpec is how a job's pages are requested. Its fields sit at the top
// level of a job file.
type RequestSpec struct {
	// Proxy is auto (through the proxy pool when it holds proxies, else
	// direct), require (never direct: wait for the pool) or off.
	Proxy string `yaml:"proxy" json:"proxy"`
	// ObeyRobots makes every request follow the host's robots.txt,
	// Crawl-delay included.
	ObeyRobots bool `yaml:"obey_robots" json:"obey_robots"`
	// PerHostRPS is the cluster-wide request rate per host; 0 means the
	// host's Crawl-delay, or the default rate when it has none.
	PerHostRPS float64 `yaml:"per_host_rps" json:"per_host_rps"`
	// PerHostConcurrency is the cluster-wide number of requests in flight
	// per host.
	PerHostConcurrency int `yaml:"per_host_concurrency" json:"per_host_concurrency"`
	// Routing is how item pages are spread over the slaves: auto (the
	// default: by host when PerHostRPS is low, see RoutesByHost), host or
	// url.
	Routing string `yaml:"routing" json:"routing,omitempty"`
	// UserAgent is sent with every request, robots.txt included.
	UserAgent string `yaml:"user_agent" json:"user_agent"`
	// Headers are sent with every request.
	Headers map[string]string `yaml:"headers" json:"headers,omitempty"`
	// Cookies keeps the cookies sites set, per job and per process.
	Cookies bool `yaml:"cookies" json:"cookies,omitempty"`
	// Timeout bounds one request, body included.
	Timeout Duration `yaml:"timeout" json:"timeout"`
	// MaxBodyBytes bounds a page's size, after decompression.
	MaxBodyBytes int64 `yaml:"max_body_bytes" json:"max_body_bytes"`
	// BanText lists substrings (matched without regard to case) that mark
	// an answer as a ban or captcha page rather than the page asked for:
	// such a page is never stored; fetched through a proxy, it bans the
	// proxy for the host and the page is tried through another.
	BanText []string `yaml:"ban_text" json:"ban_text,omitempty"`
}

// LinkRule selects links: the attribute Attr (default href) of the elements
// matching CSS or XPath (an XPath that selects attributes gives their
// values), or the strings at a gjson path JSON of a JSON page. Allow and
// Deny filter the links, resolved against the page, by regular expression.
// The links lead to pages of kind Kind.
type LinkRule struct {
	CSS   string `yaml:"css" json:"css"`
	XPath string `yaml:"xpath" json:"xpath,omitempty"`
	JSON  string `yaml:"json" json:"json,omitempty"`
	Attr  string `yaml:"attr" json:"attr,omitempty"`
	Allow string `yaml:"allow" json:"allow,omitempty"`
	Deny  string `yaml:"deny" json:"deny,omitempty"`
	Kind  string `yaml:"kind" json:"kind,omitempty"`
	// Priority is the priority of the pages the rule finds; nil means the
	// priority of the kind they lead to (LinkPriority).
	Priority *int `yaml:"priority" json:"priority,omitempty"`
}

// FieldRule selects one field of an item: the text (or attribute Attr) of the
// first element matching CSS or XPath, the value at a gjson path JSON of a
// JSON page or JSONLD of the page's JSON-LD, or of every match as a list
// when All is set. Regex cuts the value out of the selected text, Type
// converts it, and Required fails an item without it.
type FieldRule struct {
	CSS      string `yaml:"css" json:"css"`
	XPath    string `yaml:"xpath" json:"xpath,omitempty"`
	JSON     string `yaml:"json" json:"json,omitempty"`
	JSONLD   string `yaml:"jsonld" json:"jsonld,omitempty"`
	Attr     string `yaml:"attr" json:"attr,omitempty"`
	All      bool   `yaml:"all" json:"all,omitempty"`
	Regex    string `yaml:"regex" json:"regex,omitempty"`
	Type     string `yaml:"type" json:"type,omitempty"`
	Required bool   `yaml:"required" json:"required,omitempty"`
}

// DedupSpec configures the expiring dupefilter of a job's detail pages.
type DedupSpec struct {
	// Mode is bloom (default), exact or set.
	Mode string `yaml:"mode" json:"mode,omitempty"`
	// Window is how long a fetched detail page counts as seen.
	Window Duration `yaml:"window" json:"window"`
	// Granularity is the time slice of one Bloom filter; 0 means 24h, or
	// the window when that is shorter.
	Granularity Duration `yaml:"granularity" json:"granularity"`
	// Capacity is the number of URLs one time slice is sized for.
	Capacity int64 `yaml:"capacity" json:"capacity"`
	// ErrorRate is the false-positive rate of the whole window.
	ErrorRate float64 `yaml:"error_rate" json:"error_rate"`
}

// Default values of a job spec's optional settings.
const (
	DefaultDedupMode          = "bloom"
	DefaultDedupWindow        = Duration(168 * time.Hour)
	DefaultDedupGranule       = Duration(24 * time.Hour)
	DefaultDedupCapacity      = 10_000_000
	DefaultDedupErrorRate     = 0.001
	DefaultMaxRetries         = 3
	DefaultProxy              = ProxyAuto
	DefaultPerHostConcurrency = 8
	DefaultUserAgent          = "crawler/1.0 (+https://github.com/crawler-dev/crawler)"
	DefaultTimeout            = Duration(30 * time.Second)
	DefaultMaxBodyBytes       = 10 << 20
)

// Proxy modes of a job.
const (
	ProxyAuto    = "auto"
	ProxyRequire = "require"
	ProxyOff     = "off"
)

// Default returns a spec with every optional setting at its default.
// Job files are decoded on top of it, so a field left out keeps its
// default and a field given as 0 means 0.
func Default() Job {
	return Job{
		Dedup: DedupSpec{Mode: DefaultDedupMode, Window: DefaultDedupWindow,
			Capacity: DefaultDedupCapacity, ErrorRate: DefaultDedupErrorRate},
		MaxRetries: DefaultMaxRetries,
		RequestSpec: RequestSpec{Proxy: DefaultProxy, ObeyRobots: true, PerHostConcurrency: DefaultPerHostConcurrency, Routing: RoutingAuto,
			UserAgent: DefaultUserAgent, Timeout: DefaultTimeout, MaxBodyBytes: DefaultMaxBodyBytes},
	}
}

var jobNameRE = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)

// Parse reads a YAML job file on top of the defaults, derives what
// depends on other fields and validates it. Unknown fields are errors, so a
// typo does not silently do nothing.
func Parse(r io.Reader) (*Job, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxJobFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read job: %w", err)
	}
	if len(data) > MaxJobFileBytes {
		return nil, fmt.Errorf("job: the file is larger than %d MiB", MaxJobFileBytes>>20)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	spec := Default()
	if err := dec.Decode(&spec); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("job: file is empty")
		}
		return nil, fmt.Errorf("job: %w", nameFields(data, err))
	}
	if err := checkWholeNumbers(data); err != nil {
		return nil, fmt.Errorf("job: %w", err)
	}
	spec.SeedCount = 0
	spec.takeSeedList()
	spec.ApplyDefaults()
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	return &spec, nil
}

// Decode reads a spec stored as JSON by a submission, on top of the
// defaults, so a spec stored by an older version gets the defaults of
// fields it did not have.
func Decode(raw []byte) (*Job, error) {
	spec := Default()
	if err := json.Unmarshal(raw, &spec); err != nil {
		return nil, fmt.Errorf("decode job spec: %w", err)
	}
	spec.ApplyDefaults()
	return &spec, nil
}

// ApplyDefaults fills in what depends on other fields: the granularity
// (24h, or the window when shorter), link attributes (href) and the allowed
// domains (the seeds' hosts). It never replaces a value the user gave.
func (s *Job) ApplyDefaults() {
	if s.Dedup.Granularity == 0 {
		s.Dedup.Granularity = min(DefaultDedupGranule, s.Dedup.Window)
	}
	for _, r := range []*LinkRule{s.NextLink, s.DetailLink} {
		if r != nil && r.Attr == "" {
			r.Attr = "href"
		}
	}
	if len(s.AllowedDomains) == 0 {
		s.AllowedDomains = seedHosts(s.Seeds)
	}
	if len(s.BanText) == 0 {
		s.BanText = nil // "ban_text: []" and leaving it out mean the same
	}
}

// AllowsHost reports whether host is one of the allowed domains or a
// subdomain of one. An IP literal among the domains (IPv6 with or without
// brackets) allows that address only.
func (s *Job) AllowsHost(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, d := range s.AllowedDomains {
		if ip, ok := ipLiteral(d); ok {
			if hostIP, ok := ipLiteral(host); ok && hostIP == ip {
				return true
			}
			continue
		}
		d = strings.ToLower(d)
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return false
}

// ipLiteral parses an IP address written as in a URL's host, an IPv6 one
// with or without brackets; zones are not addresses a crawl can name.
func ipLiteral(host string) (netip.Addr, bool) {
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	ip, err := netip.ParseAddr(host)
	return ip, err == nil && ip.Zone() == ""
}
