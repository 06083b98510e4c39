package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// JobSpec is a crawl job as a user writes it in a job file: where to start,
// how to find list and detail pages, what to extract, and how long a detail
// page counts as seen.
type JobSpec struct {
	// Name is the job's identity: lowercase letters, digits, '_' and '-'.
	Name string `yaml:"name" json:"name"`
	// Seeds are the first list pages.
	Seeds []string `yaml:"seeds" json:"seeds"`
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
	// MaxDepth limits the list-page BFS depth (seeds are depth 0); 0 means none.
	MaxDepth int `yaml:"max_depth" json:"max_depth,omitempty"`
	// Dedup configures the detail-page dupefilter.
	Dedup DedupSpec `yaml:"dedup" json:"dedup"`
	// RecrawlEvery re-seeds the job periodically; 0 crawls once. Detail
	// pages are fetched again only once the dedup window has passed.
	RecrawlEvery Duration `yaml:"recrawl_every" json:"recrawl_every,omitempty"`
	// MaxRetries is how often a transient fetch error is retried.
	MaxRetries int `yaml:"max_retries" json:"max_retries,omitempty"`
}

// LinkRule selects links: the attribute Attr (default href) of the elements
// matching CSS.
type LinkRule struct {
	CSS  string `yaml:"css" json:"css"`
	Attr string `yaml:"attr" json:"attr,omitempty"`
}

// FieldRule selects one field of an item: the text (or attribute Attr) of the
// first element matching CSS, or of every match as a list when All is set.
type FieldRule struct {
	CSS  string `yaml:"css" json:"css"`
	Attr string `yaml:"attr" json:"attr,omitempty"`
	All  bool   `yaml:"all" json:"all,omitempty"`
}

// DedupSpec configures the expiring dupefilter of a job's detail pages.
type DedupSpec struct {
	// Mode is bloom (default), exact or set.
	Mode string `yaml:"mode" json:"mode,omitempty"`
	// Window is how long a fetched detail page counts as seen.
	Window Duration `yaml:"window" json:"window"`
	// Granularity is the time slice of one Bloom filter.
	Granularity Duration `yaml:"granularity" json:"granularity"`
	// Capacity is the number of URLs one time slice is sized for.
	Capacity int64 `yaml:"capacity" json:"capacity"`
	// ErrorRate is the false-positive rate of the whole window.
	ErrorRate float64 `yaml:"error_rate" json:"error_rate"`
}

// Default values of a job spec's optional settings.
const (
	DefaultDedupMode      = "bloom"
	DefaultDedupWindow    = Duration(168 * time.Hour)
	DefaultDedupGranule   = Duration(24 * time.Hour)
	DefaultDedupCapacity  = 10_000_000
	DefaultDedupErrorRate = 0.001
	DefaultMaxRetries     = 3
)

var jobNameRE = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)

// ParseJobSpec reads a YAML job file, fills in defaults and validates it.
// Unknown fields are errors, so a typo does not silently do nothing.
func ParseJobSpec(r io.Reader) (*JobSpec, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read job: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var spec JobSpec
	if err := dec.Decode(&spec); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("job: file is empty")
		}
		return nil, fmt.Errorf("job: %w", err)
	}
	spec.ApplyDefaults()
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	return &spec, nil
}

// ApplyDefaults fills in the optional settings left empty.
func (s *JobSpec) ApplyDefaults() {
	if s.Dedup.Mode == "" {
		s.Dedup.Mode = DefaultDedupMode
	}
	if s.Dedup.Window == 0 {
		s.Dedup.Window = DefaultDedupWindow
	}
	if s.Dedup.Granularity == 0 {
		s.Dedup.Granularity = min(DefaultDedupGranule, s.Dedup.Window)
	}
	if s.Dedup.Capacity == 0 {
		s.Dedup.Capacity = DefaultDedupCapacity
	}
	if s.Dedup.ErrorRate == 0 {
		s.Dedup.ErrorRate = DefaultDedupErrorRate
	}
	if s.MaxRetries == 0 {
		s.MaxRetries = DefaultMaxRetries
	}
	for _, r := range []*LinkRule{s.NextLink, s.DetailLink} {
		if r != nil && r.Attr == "" {
			r.Attr = "href"
		}
	}
	if len(s.AllowedDomains) == 0 {
		s.AllowedDomains = seedHosts(s.Seeds)
	}
}

// Validate reports the first problem with the spec, naming the field.
func (s *JobSpec) Validate() error {
	if !jobNameRE.MatchString(s.Name) {
		return fmt.Errorf("job: name: %q must be 1-64 characters of [a-z0-9_-]", s.Name)
	}
	if len(s.Seeds) == 0 {
		return errors.New("job: seeds: at least one seed URL is required")
	}
	for i, seed := range s.Seeds {
		if err := checkHTTPURL(seed); err != nil {
			return fmt.Errorf("job: seeds[%d]: %w", i, err)
		}
	}
	for i, d := range s.AllowedDomains {
		if d == "" || strings.ContainsAny(d, "/:? ") {
			return fmt.Errorf("job: allowed_domains[%d]: %q is not a host name", i, d)
		}
	}
	if s.DetailLink == nil || s.DetailLink.CSS == "" {
		return errors.New("job: detail_link.css: a selector for detail links is required")
	}
	if s.NextLink != nil && s.NextLink.CSS == "" {
		return errors.New("job: next_link.css: selector is empty")
	}
	if len(s.Fields) == 0 {
		return errors.New("job: fields: at least one field is required")
	}
	for name, f := range s.Fields {
		if f.CSS == "" {
			return fmt.Errorf("job: fields.%s.css: selector is empty", name)
		}
	}
	if s.MaxDepth < 0 {
		return fmt.Errorf("job: max_depth: %d is negative", s.MaxDepth)
	}
	if s.MaxRetries < 0 {
		return fmt.Errorf("job: max_retries: %d is negative", s.MaxRetries)
	}
	if s.RecrawlEvery < 0 {
		return fmt.Errorf("job: recrawl_every: %s is negative", s.RecrawlEvery)
	}
	return s.Dedup.validate()
}

func (d DedupSpec) validate() error {
	switch d.Mode {
	case "bloom", "exact", "set":
	default:
		return fmt.Errorf("job: dedup.mode: %q is not one of bloom, exact, set", d.Mode)
	}
	if d.Window <= 0 {
		return fmt.Errorf("job: dedup.window: %s must be positive", d.Window)
	}
	if d.Granularity <= 0 || d.Granularity > d.Window {
		return fmt.Errorf("job: dedup.granularity: %s must be positive and at most the window %s", d.Granularity, d.Window)
	}
	if d.Window.Std()%d.Granularity.Std() != 0 {
		return fmt.Errorf("job: dedup.granularity: window %s is not a whole number of %s granules", d.Window, d.Granularity)
	}
	if d.Granularity.Std()%time.Second != 0 {
		return fmt.Errorf("job: dedup.granularity: %s is not a whole number of seconds", d.Granularity)
	}
	if d.Capacity <= 0 {
		return fmt.Errorf("job: dedup.capacity: %d must be positive", d.Capacity)
	}
	if d.ErrorRate <= 0 || d.ErrorRate >= 1 {
		return fmt.Errorf("job: dedup.error_rate: %g must be between 0 and 1", d.ErrorRate)
	}
	return nil
}

func checkHTTPURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q is not an http or https URL", raw)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("%q has no host", raw)
	}
	return nil
}

func seedHosts(seeds []string) []string {
	seen := map[string]bool{}
	var hosts []string
	for _, s := range seeds {
		u, err := url.Parse(s)
		if err != nil || u.Hostname() == "" {
			continue
		}
		h := strings.ToLower(u.Hostname())
		if !seen[h] {
			seen[h] = true
			hosts = append(hosts, h)
		}
	}
	return hosts
}
