package jobspec

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestParseJobSpec_contractPartTwo: the request settings of the contract's
// second part parse as written.
func TestParseJobSpec_contractPartTwo(t *testing.T) {
	f, err := os.Open("testdata/contract2.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	spec, err := Parse(f)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	r := spec.RequestSpec
	if r.Proxy != ProxyAuto || !r.ObeyRobots || r.PerHostRPS != 0 || r.PerHostConcurrency != 8 ||
		r.UserAgent != "crawler/1.0 (+https://example.com/bot)" || r.Headers["Accept-Language"] != "zh-CN,zh;q=0.9" {
		t.Errorf("request settings = %+v", r)
	}
}

// TestParseJobSpec_zeroMeansZero: a value given as 0 is kept (or refused,
// naming the field), never replaced by a default; a field left out keeps
// its default, also inside a partly given mapping.
func TestParseJobSpec_zeroMeansZero(t *testing.T) {
	spec, err := Parse(strings.NewReader(minimalJob + "max_retries: 0\nobey_robots: false\ndedup: {window: 6h}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if spec.MaxRetries != 0 {
		t.Errorf("max_retries: 0 parsed as %d", spec.MaxRetries)
	}
	if spec.ObeyRobots {
		t.Error("obey_robots: false parsed as true")
	}
	if spec.Dedup.Capacity != DefaultDedupCapacity || spec.Dedup.ErrorRate != DefaultDedupErrorRate || spec.Dedup.Mode != "bloom" {
		t.Errorf("dedup {window: 6h} lost the other defaults: %+v", spec.Dedup)
	}
	if spec.Dedup.Granularity.Std() != 6*time.Hour {
		t.Errorf("granularity = %s, want the 6h window", spec.Dedup.Granularity)
	}
	def, err := Parse(strings.NewReader(minimalJob))
	if err != nil {
		t.Fatal(err)
	}
	if def.MaxRetries != DefaultMaxRetries || !def.ObeyRobots || def.PerHostConcurrency != DefaultPerHostConcurrency ||
		def.UserAgent != DefaultUserAgent || def.Proxy != ProxyAuto || def.Timeout != DefaultTimeout {
		t.Errorf("defaults not applied: %+v", def.RequestSpec)
	}
}

// TestParseJobSpec_bounds: every setting that sizes something is bounded,
// and every refusal names the field.
func TestParseJobSpec_bounds(t *testing.T) {
	for _, tc := range []struct{ line, field string }{
		{"dedup: {capacity: 0}", "dedup.capacity"},
		{"dedup: {capacity: 1000000000000000}", "dedup.capacity"},
		{"dedup: {error_rate: 0}", "dedup.error_rate"},
		{"dedup: {error_rate: 1e-12}", "dedup.error_rate"},
		{"dedup: {window: 876000h, granularity: 24h}", "dedup.window"},
		{"dedup: {window: 168h, granularity: 60s}", "dedup.granularity"},
		{"max_retries: 1000", "max_retries"},
		{"recrawl_every: 1ms", "recrawl_every"},
		{"proxy: sometimes", "proxy"},
		{"per_host_rps: -1", "per_host_rps"},
		{"per_host_concurrency: 0", "per_host_concurrency"},
		{"routing: sideways", "routing"},
		{"user_agent: \"\"", "user_agent"},
		{"timeout: 0", "timeout"},
		{"max_body_bytes: 10", "max_body_bytes"},
		{"headers: {Host: evil.example}", "headers.Host"},
		{"headers: {\"Bad Name\": x}", "headers"},
		{"allowed_domains: [\"user@example.com\"]", "allowed_domains[0]"},
		{"ban_text: [\"captcha\", \" \"]", "ban_text[1]"},
		{"ban_text: [\"" + strings.Repeat("x", MaxBanTextBytes+1) + "\"]", "ban_text[0]"},
		{"ban_text: [" + strings.Repeat("a, ", MaxBanTexts) + "a]", "ban_text"},
	} {
		t.Run(tc.line, func(t *testing.T) {
			spec, err := Parse(strings.NewReader(minimalJob + tc.line + "\n"))
			if err == nil {
				t.Fatalf("Parse = %+v, want an error naming %s", spec, tc.field)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("error %q does not name %s", err, tc.field)
			}
		})
	}
	t.Run("too many seeds", func(t *testing.T) {
		spec := Default()
		spec.Name = "big"
		spec.Seeds = make([]string, MaxSeeds+1)
		if err := spec.Validate(); err == nil || !strings.Contains(err.Error(), "seeds") {
			t.Errorf("Validate = %v, want an error naming seeds", err)
		}
	})
}

// TestParseJobSpec_banText: ban_text is read as written, empty by default,
// and "ban_text: []" means the same as leaving it out.
func TestParseJobSpec_banText(t *testing.T) {
	spec, err := Parse(strings.NewReader(minimalJob + "ban_text: [\"Access denied\", captcha]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Access denied", "captcha"}; !reflect.DeepEqual(spec.BanText, want) {
		t.Errorf("ban_text = %q, want %q", spec.BanText, want)
	}
	for _, text := range []string{minimalJob, minimalJob + "ban_text: []\n"} {
		spec, err := Parse(strings.NewReader(text))
		if err != nil || spec.BanText != nil {
			t.Errorf("ban_text = %#v (%v), want nil", spec.BanText, err)
		}
	}
}

// TestParseJobSpec_selectors: a selector that does not compile is refused
// at submission, naming the field, instead of giving every item an empty
// field.
func TestParseJobSpec_selectors(t *testing.T) {
	for _, tc := range []struct{ yaml, field string }{
		{strings.Replace(minimalJob, `title: {css: "h1"}`, `title: {css: "h1[[["}`, 1), "fields.title.css"},
		{strings.Replace(minimalJob, `detail_link: {css: ".item a"}`, `detail_link: {css: "a:nope("}`, 1), "detail_link.css"},
		{minimalJob + "next_link: {css: \">>>\"}\n", "next_link.css"},
		{minimalJob + "  \"a.b\": {css: p}\n", "a.b"},
	} {
		_, err := Parse(strings.NewReader(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("bad selector for %s: error %v, want one naming it", tc.field, err)
		}
	}
}

// TestDecodeJobSpec: a stored spec from before a field existed gets its
// default.
func TestDecodeJobSpec(t *testing.T) {
	spec, err := Decode([]byte(`{"name":"old","detail_link":{"css":"a"},"fields":{"t":{"css":"h1"}},"dedup":{"window":"1h","granularity":"1h","capacity":5,"error_rate":0.01},"max_retries":0}`))
	if err != nil {
		t.Fatal(err)
	}
	if spec.PerHostConcurrency != DefaultPerHostConcurrency || !spec.ObeyRobots || spec.MaxRetries != 0 || spec.Dedup.Capacity != 5 {
		t.Errorf("Decode = %+v", spec)
	}
	if _, err := Decode([]byte("{")); err == nil {
		t.Error("Decode({) succeeded")
	}
}

// TestParseJobSpec_typeErrors: a value of the wrong type names its field,
// not only its line.
func TestParseJobSpec_typeErrors(t *testing.T) {
	for _, tc := range []struct{ line, field string }{
		{"max_retries: three", "max_retries"},
		{"recrawl_every: 1w", "recrawl_every"},
		{"dedup: {window: 168h, capacity: lots}", "dedup.capacity"},
		{"dedup: {window: 7 days}", "dedup.window"},
		{"headers: [a, b]", "headers"},
		{"obey_robots: maybe", "obey_robots"},
	} {
		_, err := Parse(strings.NewReader(minimalJob + tc.line + "\n"))
		if err == nil || !strings.HasPrefix(err.Error(), "job: "+tc.field+" (line") {
			t.Errorf("%s: error %v, want one naming %s and its line", tc.line, err, tc.field)
		}
	}
}
