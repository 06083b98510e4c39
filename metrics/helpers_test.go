package metrics

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// newRegistry returns a Registry with opts, failing the test on error.
func newRegistry(t testing.TB, opts Options) *Registry {
	t.Helper()
	r, err := New(opts)
	if err != nil {
		t.Fatalf("New(%+v): %v", opts, err)
	}
	return r
}

// serve serves r on loopback until the test ends and returns its base URL.
func serve(t *testing.T, r *Registry) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Serve(ctx, "127.0.0.1:0", r)
	if err != nil {
		t.Fatalf("Serve: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		if err := s.Wait(); err != nil {
			t.Errorf("Wait: %v", err)
		}
	})
	return "http://" + s.Addr()
}

// get fetches url and returns its status, content type and body.
func get(t *testing.T, url string) (int, string, string) {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", url, err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(body)
}

// scraped are metric families by name, as scraped or gathered.
type scraped map[string]*dto.MetricFamily

// scrape GETs base/metrics over HTTP and parses the text exposition.
func scrape(t *testing.T, base string) scraped {
	t.Helper()
	status, ctype, body := get(t, base+"/metrics")
	if status != http.StatusOK || !strings.HasPrefix(ctype, "text/plain") {
		t.Fatalf("GET /metrics: %d %q", status, ctype)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, body)
	}
	return fams
}

// gather reads r's metrics without HTTP.
func gather(t *testing.T, r *Registry) scraped {
	t.Helper()
	mfs, err := r.Gatherer().Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	fams := make(scraped, len(mfs))
	for _, mf := range mfs {
		fams[mf.GetName()] = mf
	}
	return fams
}

// series returns the metric of family name whose labels are exactly
// labels ("k=v" pairs), or nil.
func (f scraped) series(name string, labels ...string) *dto.Metric {
	mf := f[name]
	if mf == nil {
		return nil
	}
	want := strings.Join(sorted(labels), ",")
	for _, m := range mf.GetMetric() {
		if labelString(m) == want {
			return m
		}
	}
	return nil
}

// value is the counter's or gauge's value, or the histogram's sample
// count; it fails the test when the series is missing.
func (f scraped) value(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	m := f.series(name, labels...)
	if m == nil {
		t.Fatalf("no series %s{%s}; have:\n%s", name, strings.Join(labels, ","), f.dump(name))
	}
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	t.Fatalf("series %s{%s} has no value", name, strings.Join(labels, ","))
	return 0
}

// expect fails the test unless the series has value want.
func (f scraped) expect(t *testing.T, want float64, name string, labels ...string) {
	t.Helper()
	if got := f.value(t, name, labels...); got != want {
		t.Errorf("%s{%s} = %v, want %v", name, strings.Join(labels, ","), got, want)
	}
}

// count is how many series family name has.
func (f scraped) count(name string) int {
	if mf := f[name]; mf != nil {
		return len(mf.GetMetric())
	}
	return 0
}

// dump lists family name's series, for failure messages.
func (f scraped) dump(name string) string {
	var b strings.Builder
	if mf := f[name]; mf != nil {
		for _, m := range mf.GetMetric() {
			fmt.Fprintf(&b, "  {%s}\n", labelString(m))
		}
	}
	return b.String()
}

func labelString(m *dto.Metric) string {
	var pairs []string
	for _, l := range m.GetLabel() {
		pairs = append(pairs, l.GetName()+"="+l.GetValue())
	}
	return strings.Join(sorted(pairs), ",")
}

func sorted(s []string) []string {
	s = append([]string(nil), s...)
	sort.Strings(s)
	return s
}
