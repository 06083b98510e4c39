package extract

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/crawler-dev/crawler/jobspec"
)

// fuzzBudget is the small budget the JSON fuzz targets extract with, so
// that a slow input shows as work past it rather than as a slow run.
var fuzzBudget = Budget{Base: 1 << 16, PerNode: 64}

// allocated is how many bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// checkBounded checks what every JSON fuzz target asserts: the extraction
// ended in a result or in one of the errors a page may cause, its work
// within the page's limit, and what it allocated within a constant factor
// of the work it counted and the bytes it was given.
func checkBounded(t *testing.T, res *Result, err error, limit int64, alloc uint64, in int) {
	t.Helper()
	work := limit
	switch {
	case err == nil:
		work = res.Work
		if res.Work > limit {
			t.Fatalf("work %d units, past the page's limit %d", res.Work, limit)
		}
	case errors.Is(err, ErrLimit), errors.Is(err, ErrTooDeep), errors.Is(err, errNotJSON):
	default:
		t.Fatalf("extract: %v", err)
	}
	if bound := 1<<20 + 64*(16*uint64(work)+uint64(in)); alloc > bound {
		t.Fatalf("allocated %d bytes for %d units of work on %d bytes, want at most %d", alloc, work, in, bound)
	}
}

// FuzzJSONPath runs any gjson path the job validation accepts over any
// JSON page, as links and as a field, and checks that the work stays
// within the page's budget and the memory within a constant factor of
// the work counted (see checkBounded): deep pages, modifiers and lists of
// lists included.
//
//	go test -run='^$' -fuzz=FuzzJSONPath -fuzztime=30s ./extract/
func FuzzJSONPath(f *testing.F) {
	for _, seed := range []struct{ body, path string }{
		{`{"items":[{"url":"/a"},{"url":"/b","tags":[["x"],["y"]]}],"next":"/n"}`, "items.#.url"},
		{`{"items":[{"url":"/a"},{"url":"/b","tags":[["x"],["y"]]}]}`, "items.#.tags"},
		{`[[[[1,2],[3]],[[4]]]]`, "@flatten|@reverse"},
		{`{"s":"[[[[[[1]]]]]]"}`, "s|@fromstr|0.0"},
		{`{"a":{"b":[1e18,0x1F,"1e3"]}}`, "a.b"},
		{`{"x":[{"n":1},{"n":2}]}`, `x.#(n>1)#.n`},
		{`{"a":1,"b":[2,3]}`, "[a,b,a,b]"},
		{nestedLists(600), "0.0.0"},
		{`{"a":"` + strings.Repeat(`\"`, 100) + `"}`, "@keys|@values|@join"},
	} {
		f.Add([]byte(seed.body), seed.path)
	}
	f.Fuzz(func(t *testing.T, body []byte, path string) {
		if path == "" || len(body) > 1<<16 || len(path) > 256 || jobspec.CheckJSONPath(path) != nil {
			return
		}
		k := compileKinds(t, map[string]jobspec.PageKind{"api": {Format: jobspec.FormatJSON, Item: true,
			Links:  []jobspec.LinkRule{{JSON: path, Kind: "api"}},
			Fields: map[string]jobspec.FieldRule{"all": {JSON: path, All: true}, "n": {JSON: path, Type: "integer"}}}}).Kind("api")
		k.Budget = fuzzBudget
		var res *Result
		var err error
		alloc := allocated(func() { res, err = k.Extract(context.Background(), "https://example.com/api", body) })
		checkBounded(t, res, err, fuzzBudget.limit(len(body)/16), alloc, len(body)+len(path))
	})
}

// FuzzJSONLD runs a jsonld path over a page holding any JSON-LD block (and
// a good one after it) and checks the same bounds as FuzzJSONPath: the
// walk over lists of lists and @graph is counted and bounded.
//
//	go test -run='^$' -fuzz=FuzzJSONLD -fuzztime=30s ./extract/
func FuzzJSONLD(f *testing.F) {
	for _, seed := range []struct{ block, path string }{
		{`{"@type":"Product","brand":{"name":"Acme"},"offers":{"price":"12.5"}}`, "brand.name"},
		{`[{"@graph":[{"@graph":[{"n":1}]},[{"n":2}]]},{"n":3}]`, "n"},
		{`{"\u0040graph":[{"brand":{"name":"x"}}]}`, "brand.name"},
		{nestedLists(600), "brand"},
		{strings.Repeat("[", 300) + `{"brand":{"name":"deep"}}` + strings.Repeat("]", 300), "brand.name"},
		{`{"image":["a.jpg",["b.jpg"]]}`, "image"},
		{`{"n":`, "n"},
	} {
		f.Add(seed.block, seed.path)
	}
	f.Fuzz(func(t *testing.T, block, path string) {
		if path == "" || len(block) > 1<<16 || len(path) > 256 || jobspec.CheckJSONPath(path) != nil {
			return
		}
		page := ldPage(block, `{"brand":{"name":"Acme"}}`)
		k := compileKinds(t, map[string]jobspec.PageKind{"p": {Item: true,
			Fields: map[string]jobspec.FieldRule{"all": {JSONLD: path, All: true}, "n": {JSONLD: path, Type: "number"}}}}).Kind("p")
		k.Budget = fuzzBudget
		doc, err := Parse("https://example.com/p", page)
		if err != nil {
			t.Fatal(err)
		}
		var res *Result
		alloc := allocated(func() { res, err = k.ExtractDocument(context.Background(), doc) })
		checkBounded(t, res, err, fuzzBudget.limit(doc.Elements()), alloc, len(page)+len(path))
	})
}
