package extract

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/crawler-dev/crawler/jobspec"
)

// TestParseContext_stops (issue 18): the Links and Fields calls of a
// document parsed with ParseContext stop once its context is done, after
// at most one look's worth of work (checkEvery units), and Err says why;
// a page past its budget reports ErrLimit, which FailureKind names.
func TestParseContext_stops(t *testing.T) {
	page := []byte(strings.Repeat("<div><p>x</p></div>", 20_000))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	doc, err := ParseContext(ctx, "https://example.com/", page)
	if err != nil {
		t.Fatal(err)
	}
	fields := doc.Fields(map[string]jobspec.FieldRule{"x": {XPath: "//div//p"}})
	if !errors.Is(doc.Err(), context.Canceled) || fields["x"] != "" {
		t.Errorf("fields %v, Err %v: want nothing and context.Canceled", fields, doc.Err())
	}
	if used := doc.legacy.m.used; used > 2*checkEvery {
		t.Errorf("%d units of work after the stop, want at most %d", used, 2*checkEvery)
	}
	if kind := FailureKind(doc.Err()); kind != "" {
		t.Errorf("a stop is no failure of the page: kind %q", kind)
	}

	deep := []byte(strings.Repeat("<div>", 300) + `<a href="/x">x</a>` + strings.Repeat("</div>", 300))
	doc, err = ParseContext(context.Background(), "https://example.com/", deep)
	if err != nil {
		t.Fatal(err)
	}
	doc.Fields(map[string]jobspec.FieldRule{"walk": {XPath: "//div//div//div//div//div//a"}})
	if !errors.Is(doc.Err(), ErrLimit) || FailureKind(doc.Err()) != FailureLimit {
		t.Errorf("Err %v (kind %q), want ErrLimit, kind %s", doc.Err(), FailureKind(doc.Err()), FailureLimit)
	}
}
