package jobspec

import (
	"strings"
	"testing"
)

// TestParseJobSpec_errorPaths: an unknown or ill-typed field is named by
// its own path in the job file, never by a Go type, and a number with a
// fraction is refused where a whole number belongs (not truncated).
func TestParseJobSpec_errorPaths(t *testing.T) {
	const kinds = `name: k
seeds: ["https://example.com/"]
kinds:
  start:
    links: [{css: "a", kind: product}]
  product:
    item: true
    fields:
      price: {css: ".p", type: number%s}
`
	for _, tc := range []struct{ name, job, want string }{
		{"unknown field of a field rule", strings.Replace(minimalJob, `{css: "h1"}`, `{css: "h1", re: "x"}`, 1), "fields.title.re"},
		{"unknown field deep in a kind", strings.Replace(kinds, "%s", ", typ: 1", 1), "kinds.product.fields.price.typ"},
		{"unknown field of a kind", strings.Replace(kinds, "    item: true\n", "    item: true\n    match: x\n", 1), "kinds.product.match"},
		{"ill-typed value", minimalJob + "max_retries: [1]\n", "max_retries"},
		{"fraction in an integer", minimalJob + "max_depth: 1.5\n", "max_depth"},
		{"fraction in a nested integer", minimalJob + "dedup: {window: 1h, capacity: 2.5}\n", "dedup.capacity"},
	} {
		_, err := Parse(strings.NewReader(tc.job))
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if !strings.HasPrefix(msg, "job: "+tc.want+" (line") {
			t.Errorf("%s: error %q, want it to start with %q", tc.name, msg, "job: "+tc.want+" (line")
		}
		for _, goName := range []string{"jobspec.", "!!", "int64", "float64", "[]", "struct"} {
			if strings.Contains(msg, goName) {
				t.Errorf("%s: error %q names %q, a Go or YAML type", tc.name, msg, goName)
			}
		}
	}
}
