package jobspec

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/http/httpguts"
)

// Bounds of a job spec: no job file may make a process or Redis build
// something of unbounded size.
const (
	MaxJobFileBytes    = 256 << 20
	MaxSeeds           = 5_000_000
	MaxURLBytes        = 8 << 10
	MaxAllowedDomains  = 10_000
	MaxFields          = 1_000
	MaxRetriesLimit    = 100
	MaxDedupCapacity   = 10_000_000_000
	MinDedupErrorRate  = 1e-9
	MaxDedupWindow     = Duration(10 * 365 * 24 * time.Hour)
	MaxPerHostRPS      = 10_000
	MaxPerHostInFlight = 1_000
	MinTimeout         = Duration(time.Second)
	MaxTimeout         = Duration(10 * time.Minute)
	MinMaxBodyBytes    = 1 << 10
	MaxMaxBodyBytes    = 1 << 30
	MaxBanTexts        = 100
	MaxBanTextBytes    = 1 << 10
)

// Validate reports the first problem with the spec, naming the field.
// Selectors are compiled, so a bad one is refused at submission instead of
// giving every item an empty field.
func (s *Job) Validate() error {
	for _, check := range []func() error{s.validateName, s.validateSeeds, s.validateDomains,
		s.validateModel, s.validateLimits, s.validateSchedule, s.validateRecrawl, s.Dedup.validate, s.Budget.validate,
		s.validatePriorities, s.RequestSpec.validate, s.validateRender, s.validateNotify} {
		if err := check(); err != nil {
			return fmt.Errorf("job: %w", err)
		}
	}
	return nil
}

func (s *Job) validateName() error {
	if !jobNameRE.MatchString(s.Name) {
		return fmt.Errorf("name: %q must be 1-64 characters of [a-z0-9_-]", s.Name)
	}
	return nil
}

func (s *Job) validateSeeds() error {
	switch {
	case len(s.Seeds) == 0 && s.SeedCount == 0:
		return errors.New("seeds: at least one seed URL is required")
	case len(s.Seeds) > MaxSeeds:
		return fmt.Errorf("seeds: %d seeds is more than the %d one job may have", len(s.Seeds), MaxSeeds)
	}
	for i, seed := range s.Seeds {
		if err := checkHTTPURL(seed); err != nil {
			return fmt.Errorf("seeds[%d]: %w", i, err)
		}
	}
	return nil
}

func (s *Job) validateDomains() error {
	if len(s.AllowedDomains) > MaxAllowedDomains {
		return fmt.Errorf("allowed_domains: %d domains is more than %d", len(s.AllowedDomains), MaxAllowedDomains)
	}
	for i, d := range s.AllowedDomains {
		if _, ip := ipLiteral(d); !ip && (d == "" || strings.ContainsAny(d, "/:?@[] ")) {
			return fmt.Errorf("allowed_domains[%d]: %q is not a host name", i, d)
		}
	}
	return nil
}

func (s *Job) validateLinks() error {
	if s.DetailLink == nil {
		return errors.New("detail_link.css: a selector for detail links is required")
	}
	if err := s.DetailLink.validateShort("detail_link"); err != nil {
		return err
	}
	if s.NextLink == nil {
		return nil
	}
	return s.NextLink.validateShort("next_link")
}

// validateShort checks next_link or detail_link: the kinds they lead to
// are the short form's own.
func (l LinkRule) validateShort(path string) error {
	if l.JSON != "" {
		return fmt.Errorf("%s.json: the short form's pages are HTML; json paths need kinds with format: json", path)
	}
	sel, err := oneSelector(path, false, selector{"css", l.CSS}, selector{"xpath", l.XPath})
	if err != nil {
		return err
	}
	if err := checkSelectorOf(path, sel); err != nil {
		return err
	}
	if l.Kind != "" {
		return fmt.Errorf("%s.kind: %s leads to the short form's own kind; write kinds to name others", path, path)
	}
	if err := checkPattern(path+".allow", l.Allow); err != nil {
		return err
	}
	return checkPattern(path+".deny", l.Deny)
}

func (s *Job) validateFields() error {
	if len(s.Fields) == 0 {
		return errors.New("fields: at least one field is required")
	}
	return validateFieldRules("fields", s.Fields, false)
}

func (s *Job) validateLimits() error {
	switch {
	case s.MaxDepth < 0:
		return fmt.Errorf("max_depth: %d is negative", s.MaxDepth)
	case s.MaxRetries < 0 || s.MaxRetries > MaxRetriesLimit:
		return fmt.Errorf("max_retries: %d is outside 0..%d", s.MaxRetries, MaxRetriesLimit)
	case s.RecrawlEvery < 0:
		return fmt.Errorf("recrawl_every: %s is negative", s.RecrawlEvery)
	case s.RecrawlEvery > 0 && s.RecrawlEvery < Duration(MinRoundInterval):
		return fmt.Errorf("recrawl_every: %s is shorter than %s", s.RecrawlEvery, MinRoundInterval)
	}
	return nil
}

func (d DedupSpec) validate() error {
	switch d.Mode {
	case "bloom", "exact", "set":
	default:
		return fmt.Errorf("dedup.mode: %q is not one of bloom, exact, set", d.Mode)
	}
	switch {
	case d.Window <= 0 || d.Window > MaxDedupWindow:
		return fmt.Errorf("dedup.window: %s must be positive and at most %s", d.Window, MaxDedupWindow)
	case d.Granularity <= 0 || d.Granularity > d.Window:
		return fmt.Errorf("dedup.granularity: %s must be positive and at most the window %s", d.Granularity, d.Window)
	case d.Window.Std()%d.Granularity.Std() != 0:
		return fmt.Errorf("dedup.granularity: window %s is not a whole number of %s granules", d.Window, d.Granularity)
	case d.Granularity.Std()%time.Second != 0:
		return fmt.Errorf("dedup.granularity: %s is not a whole number of seconds", d.Granularity)
	case d.Window/d.Granularity > 1000:
		return fmt.Errorf("dedup.granularity: %s makes %d slices of the window %s; at most 1000", d.Granularity, d.Window/d.Granularity, d.Window)
	case d.Capacity <= 0 || d.Capacity > MaxDedupCapacity:
		return fmt.Errorf("dedup.capacity: %d must be between 1 and %d", d.Capacity, int64(MaxDedupCapacity))
	case !(d.ErrorRate >= MinDedupErrorRate && d.ErrorRate < 1) || math.IsNaN(d.ErrorRate):
		return fmt.Errorf("dedup.error_rate: %g must be at least %g and below 1", d.ErrorRate, MinDedupErrorRate)
	}
	return nil
}

func (r RequestSpec) validate() error {
	switch r.Proxy {
	case ProxyAuto, ProxyRequire, ProxyOff:
	default:
		return fmt.Errorf("proxy: %q is not one of auto, require, off", r.Proxy)
	}
	switch {
	case r.PerHostRPS < 0 || r.PerHostRPS > MaxPerHostRPS || math.IsNaN(r.PerHostRPS):
		return fmt.Errorf("per_host_rps: %g is outside 0..%d (0: the host's Crawl-delay or the default)", r.PerHostRPS, MaxPerHostRPS)
	case r.PerHostConcurrency < 1 || r.PerHostConcurrency > MaxPerHostInFlight:
		return fmt.Errorf("per_host_concurrency: %d is outside 1..%d", r.PerHostConcurrency, MaxPerHostInFlight)
	case r.UserAgent == "" || strings.ContainsAny(r.UserAgent, "\r\n"):
		return fmt.Errorf("user_agent: %q must be one non-empty line", r.UserAgent)
	case r.Timeout < MinTimeout || r.Timeout > MaxTimeout:
		return fmt.Errorf("timeout: %s is outside %s..%s", r.Timeout, MinTimeout, MaxTimeout)
	case r.MaxBodyBytes < MinMaxBodyBytes || r.MaxBodyBytes > MaxMaxBodyBytes:
		return fmt.Errorf("max_body_bytes: %d is outside %d..%d", r.MaxBodyBytes, MinMaxBodyBytes, MaxMaxBodyBytes)
	}
	if err := r.validateRouting(); err != nil {
		return err
	}
	if err := validateHeaders(r.Headers); err != nil {
		return err
	}
	return validateBanText(r.BanText)
}

// validateBanText refuses empty markers (every page would match) and
// bounds the list, since every page fetched is searched for each.
func validateBanText(texts []string) error {
	if len(texts) > MaxBanTexts {
		return fmt.Errorf("ban_text: %d entries is more than %d", len(texts), MaxBanTexts)
	}
	for i, t := range texts {
		switch {
		case strings.TrimSpace(t) == "":
			return fmt.Errorf("ban_text[%d]: an empty text would match every page", i)
		case len(t) > MaxBanTextBytes:
			return fmt.Errorf("ban_text[%d]: %d bytes is longer than %d", i, len(t), MaxBanTextBytes)
		}
	}
	return nil
}

// validateHeaders refuses header names and values HTTP cannot carry, and
// the headers the fetcher sets itself.
func validateHeaders(h map[string]string) error {
	for name, value := range h {
		switch {
		case !httpguts.ValidHeaderFieldName(name):
			return fmt.Errorf("headers: %q is not a valid header name", name)
		case !httpguts.ValidHeaderFieldValue(value):
			return fmt.Errorf("headers.%s: the value is not a valid header value", name)
		}
		switch strings.ToLower(name) {
		case "host", "content-length", "transfer-encoding", "connection", "accept-encoding", "user-agent":
			return fmt.Errorf("headers.%s: set by the crawler (use user_agent for the User-Agent)", name)
		}
	}
	return nil
}

// checkSelector compiles a CSS selector the way extraction will.
func checkSelector(css string) error {
	if _, err := cascadia.Compile(css); err != nil {
		return fmt.Errorf("%q is not a valid CSS selector: %v", css, err)
	}
	return nil
}

func checkHTTPURL(raw string) error {
	if len(raw) > MaxURLBytes {
		return fmt.Errorf("a URL of %d bytes is longer than %d", len(raw), MaxURLBytes)
	}
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
