package jobspec

import (
	"strings"
	"testing"
)

// TestCheckJSONPath (issue 29, item 3): a job whose json or jsonld path
// uses a modifier a page can blow up is refused when it is validated,
// naming the rule; other paths, escaped names and keys holding '@' pass.
func TestCheckJSONPath(t *testing.T) {
	job := func(rule string) string {
		return `name: api
seeds: ["https://example.com/api"]
kinds:
  start:
    format: json
    links:
      - ` + rule + `
  product:
    item: true
    fields: {brand: {jsonld: "brand.name"}}
`
	}
	for path, want := range map[string]string{
		"@pretty":                   "kinds.start.links[0].json: \"@pretty\": the @pretty modifier is not supported",
		"items|@dig:url":            "the @dig modifier is not supported",
		`@flatten:{"deep":true}`:    "@flatten with deep is not supported",
		"[a,@valid]":                "the @valid modifier is not supported",
		"s|@fromstr|t|@fromstr|#":   "@fromstr is supported once per path",
		`#(x=="a")|@pretty:{"a":1}`: "the @pretty modifier",
	} {
		_, err := Parse(strings.NewReader(job("{json: '" + path + "', kind: product}")))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("json %q: %v, want an error saying %q", path, err, want)
		}
	}
	for _, path := range []string{"items.#.url", `\@pretty`, "user.mail@pretty", "@reverse|0", "@flatten", "s|@fromstr|url", `#(n=="@dig")`} {
		if err := CheckJSONPath(path); err != nil {
			t.Errorf("CheckJSONPath(%q): %v", path, err)
		}
	}
}
