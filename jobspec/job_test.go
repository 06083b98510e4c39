package jobspec

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// minimalJob is a valid job with only the required settings; bad inputs
// below replace or add one line of it.
const minimalJob = `name: news
seeds: ["https://Example.com/list/1", "https://example.com/list/2", "http://other.org/"]
detail_link: {css: ".item a"}
fields:
  title: {css: "h1"}
`

func TestParseJobSpec(t *testing.T) {
	t.Run("contract example", func(t *testing.T) {
		f, err := os.Open("testdata/contract.yaml")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		spec, err := Parse(f)
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		want := Default()
		want = Job{
			RequestSpec:    want.RequestSpec,
			Name:           "news",
			Seeds:          []string{"https://example.com/list/1"},
			AllowedDomains: []string{"example.com"},
			NextLink:       &LinkRule{CSS: "a.next", Attr: "href"},
			DetailLink:     &LinkRule{CSS: ".item a", Attr: "href"},
			Fields: map[string]FieldRule{
				"title": {CSS: "h1"},
				"body":  {CSS: "#content"},
				"tags":  {CSS: ".tag", All: true},
				"image": {CSS: "img.main", Attr: "src"},
			},
			Dedup: DedupSpec{Mode: "bloom", Window: Duration(168 * time.Hour), Granularity: Duration(24 * time.Hour),
				Capacity: 10_000_000, ErrorRate: 0.001},
			MaxRetries: DefaultMaxRetries,
		}
		if !reflect.DeepEqual(spec, &want) {
			t.Errorf("spec:\n got %+v\nwant %+v", spec, want)
		}
	})

	t.Run("defaults filled", func(t *testing.T) {
		spec, err := Parse(strings.NewReader(minimalJob))
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		wantDedup := DedupSpec{Mode: "bloom", Window: DefaultDedupWindow, Granularity: DefaultDedupGranule,
			Capacity: DefaultDedupCapacity, ErrorRate: DefaultDedupErrorRate}
		if spec.Dedup != wantDedup {
			t.Errorf("Dedup = %+v, want %+v", spec.Dedup, wantDedup)
		}
		if spec.DetailLink.Attr != "href" {
			t.Errorf("DetailLink.Attr = %q, want href", spec.DetailLink.Attr)
		}
		if spec.NextLink != nil {
			t.Errorf("NextLink = %+v, want nil when not given", spec.NextLink)
		}
		if want := []string{"example.com", "other.org"}; !reflect.DeepEqual(spec.AllowedDomains, want) {
			t.Errorf("AllowedDomains = %q, want %q (seed hosts, lowercased, deduplicated)", spec.AllowedDomains, want)
		}
		if spec.MaxRetries != 3 || spec.RecrawlEvery != 0 || spec.MaxDepth != 0 {
			t.Errorf("MaxRetries, RecrawlEvery, MaxDepth = %d, %s, %d; want 3, 0s, 0", spec.MaxRetries, spec.RecrawlEvery, spec.MaxDepth)
		}
	})

	t.Run("durations and granularity defaulting to a short window", func(t *testing.T) {
		spec, err := Parse(strings.NewReader(minimalJob + "recrawl_every: 90m\ndedup: {window: 6h}\n"))
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		if spec.RecrawlEvery.Std() != 90*time.Minute {
			t.Errorf("RecrawlEvery = %s, want 1h30m0s", spec.RecrawlEvery)
		}
		if spec.Dedup.Window.Std() != 6*time.Hour || spec.Dedup.Granularity.Std() != 6*time.Hour {
			t.Errorf("window, granularity = %s, %s; want 6h0m0s, 6h0m0s", spec.Dedup.Window, spec.Dedup.Granularity)
		}
	})

	bad := []struct {
		name     string
		yaml     string
		wantName string // the field the message must name
	}{
		{"name with capitals", strings.Replace(minimalJob, "name: news", "name: News", 1), "name"},
		{"no seeds", strings.Replace(minimalJob, `seeds: ["https://Example.com/list/1", "https://example.com/list/2", "http://other.org/"]`, "seeds: []", 1), "seeds"},
		{"ftp seed", strings.Replace(minimalJob, `"http://other.org/"`, `"ftp://example.com/x"`, 1), "seeds[2]"},
		{"missing detail_link", strings.Replace(minimalJob, "detail_link: {css: \".item a\"}\n", "", 1), "detail_link"},
		{"empty field css", minimalJob + "  body: {css: \"\"}\n", "fields.body.css"},
		{"empty next_link css", minimalJob + "next_link: {attr: href}\n", "next_link.css"},
		{"no fields", strings.Replace(minimalJob, "fields:\n  title: {css: \"h1\"}\n", "", 1), "fields"},
		{"negative max_depth", minimalJob + "max_depth: -1\n", "max_depth"},
		{"negative max_retries", minimalJob + "max_retries: -2\n", "max_retries"},
		{"negative recrawl_every", minimalJob + "recrawl_every: -1h\n", "recrawl_every"},
		{"bad allowed domain", minimalJob + "allowed_domains: [\"http://example.com\"]\n", "allowed_domains[0]"},
		{"dedup.mode bogus", minimalJob + "dedup: {mode: bogus}\n", "dedup.mode"},
		{"granularity not dividing window", minimalJob + "dedup: {window: 168h, granularity: 5h}\n", "dedup.granularity"},
		{"granularity above window", minimalJob + "dedup: {window: 1h, granularity: 2h}\n", "dedup.granularity"},
		{"negative window", minimalJob + "dedup: {window: -1h}\n", "dedup.window"},
		{"negative capacity", minimalJob + "dedup: {capacity: -5}\n", "dedup.capacity"},
		{"error_rate 1.5", minimalJob + "dedup: {error_rate: 1.5}\n", "dedup.error_rate"},
		{"unknown field detial_link", minimalJob + "detial_link: {css: a}\n", "detial_link"},
		{"bad duration", minimalJob + "recrawl_every: soon\n", "soon"},
		{"empty file", "", "empty"},
		{"only a comment", "# nothing here\n", "empty"},
	}
	for _, tc := range bad {
		t.Run("error/"+tc.name, func(t *testing.T) {
			spec, err := Parse(strings.NewReader(tc.yaml))
			if err == nil {
				t.Fatalf("Parse = %+v, want an error naming %q", spec, tc.wantName)
			}
			if spec != nil {
				t.Errorf("Parse returned a spec with the error %v", err)
			}
			if !strings.Contains(err.Error(), tc.wantName) {
				t.Errorf("error %q does not name %q", err, tc.wantName)
			}
		})
	}
}

func TestDuration_UnmarshalJSON(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{`"168h"`, 168 * time.Hour},
		{`"90s"`, 90 * time.Second},
		{`0`, 0},
		{`"0"`, 0},
	} {
		var d Duration
		if err := d.UnmarshalJSON([]byte(tc.in)); err != nil {
			t.Errorf("UnmarshalJSON(%s): %v", tc.in, err)
			continue
		}
		if d.Std() != tc.want {
			t.Errorf("UnmarshalJSON(%s) = %s, want %s", tc.in, d, tc.want)
		}
	}
	var d Duration
	if err := d.UnmarshalJSON([]byte(`"a week"`)); err == nil {
		t.Errorf("UnmarshalJSON(\"a week\") = %s, want an error", d)
	}
	b, err := Duration(36 * time.Hour).MarshalJSON()
	if err != nil || string(b) != `"36h0m0s"` {
		t.Errorf("MarshalJSON(36h) = %s, %v; want \"36h0m0s\"", b, err)
	}
}

// TestParseJobSpec_ipv6: a seed on an IPv6 literal is a job of its own
// host, and allowed_domains takes IPv6 literals with or without brackets;
// a network or a port is still refused.
func TestParseJobSpec_ipv6(t *testing.T) {
	const job = "name: v6\ndetail_link: {css: a}\nfields: {t: {css: h1}}\n"
	spec, err := Parse(strings.NewReader(job + "seeds: [\"http://[::1]:8080/list\"]\n"))
	if err != nil {
		t.Fatalf("an IPv6 seed: %v", err)
	}
	if !spec.AllowsHost("::1") || spec.AllowsHost("::2") {
		t.Errorf("allowed_domains %q: want ::1 allowed and ::2 not", spec.AllowedDomains)
	}
	for _, d := range []string{`"::1"`, `"[::1]"`, `"[2001:DB8::1]"`} {
		spec, err := Parse(strings.NewReader(job + "seeds: [\"http://[::1]/\"]\nallowed_domains: [" + d + "]\n"))
		if err != nil {
			t.Errorf("allowed_domains: [%s]: %v", d, err)
			continue
		}
		if host := strings.ToLower(strings.Trim(strings.Trim(d, `"`), "[]")); !spec.AllowsHost(host) {
			t.Errorf("allowed_domains: [%s] does not allow %s", d, host)
		}
	}
	for _, d := range []string{`"::1/64"`, `"[::1]:80"`, `"[::1"`} {
		if _, err := Parse(strings.NewReader(job + "seeds: [\"http://[::1]/\"]\nallowed_domains: [" + d + "]\n")); err == nil {
			t.Errorf("allowed_domains: [%s] accepted", d)
		}
	}
}
