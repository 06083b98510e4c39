package layers

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// module is the import path the package list is relative to.
const module = "github.com/crawler-dev/crawler/"

// layer is a set of packages; patterns ending in "/..." name a folder.
type layer struct {
	name     string
	packages []string
	// sideways allows imports between two packages of this layer.
	sideways bool
}

// layers lists the module's packages, lowest first. A name no package has
// yet (ledger, sink, internal/bytesize: on their way from other branches)
// matches nothing.
var layers = []layer{
	{name: "helpers", sideways: true, packages: []string{"internal/bytesize", "internal/connurl", "internal/ctxtime",
		"internal/demosite", "internal/hostguard", "internal/luascript", "internal/proctmp",
		"internal/redact", "internal/redisserver", "internal/shopsite", "internal/wake"}},
	{name: "job file", packages: []string{"jobspec"}},
	{name: "shared types", packages: []string{"cluster"}},
	{name: "components", sideways: true, packages: []string{"assign", "canon", "dedup", "downloader",
		"extract", "fetch", "ledger", "membership", "metrics", "neardup", "politeness", "proxy", "queue",
		"render", "robots", "sink", "sitemap", "statuspage/feed", "store"}},
	{name: "client", packages: []string{"client"}},
	{name: "notifications", packages: []string{"notify"}},
	{name: "roles", packages: []string{"api", "master", "slave", "statuspage"}},
	{name: "test support", packages: []string{"internal/testenv", "proxy/proxytest",
		"sink/s3test", "statuspage/browsertest", "store/storetest"}},
	{name: "benchmark harness", sideways: true, packages: []string{"cmd/crawler-bench/internal/..."}},
	{name: "mains", packages: []string{"cmd/crawler", "cmd/crawler-bench"}},
	{name: "checks", packages: []string{"tools/layers"}},
}

// harness is the lowest layer a package's tests may not import.
const harness = "benchmark harness"

// imports is one package's imports of the module's packages, relative to
// the module, from its code and from its tests.
type imports struct {
	pkg         string
	code, tests []string
}

// TestImportsGoDown checks every package of the module against layers.
func TestImportsGoDown(t *testing.T) {
	pkgs, err := listImports()
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages; want the module's", len(pkgs))
	}
	for _, p := range pkgs {
		for _, problem := range check(layers, p) {
			t.Error(problem)
		}
	}
}

// TestCheck: the check finds each kind of wrong arrow.
func TestCheck(t *testing.T) {
	ls := []layer{
		{name: "low", sideways: true, packages: []string{"a", "b"}},
		{name: "mid", packages: []string{"m", "n"}},
		{name: harness, packages: []string{"cmd/x/internal/..."}},
		{name: "mains", packages: []string{"cmd/x"}},
	}
	for _, tc := range []struct {
		in   imports
		want int
	}{
		{imports{pkg: "m", code: []string{"a", "b"}}, 0},
		{imports{pkg: "a", code: []string{"b"}}, 0},
		{imports{pkg: "cmd/x", code: []string{"cmd/x/internal/h", "m"}}, 0},
		{imports{pkg: "a", tests: []string{"m"}}, 0},
		{imports{pkg: "a", code: []string{"m"}}, 1},                     // up
		{imports{pkg: "m", code: []string{"n"}}, 1},                     // sideways where not allowed
		{imports{pkg: "m", tests: []string{"cmd/x/internal/h"}}, 1},     // a test imports the harness
		{imports{pkg: "m", code: []string{"cmd/x/internal/h", "z"}}, 2}, // up, and no layer
		{imports{pkg: "z"}, 1},                                          // no layer
	} {
		if got := check(ls, tc.in); len(got) != tc.want {
			t.Errorf("check(%+v) = %q; want %d problems", tc.in, got, tc.want)
		}
	}
}

// check returns what is wrong with one package's imports.
func check(ls []layer, p imports) []string {
	own, ok := layerOf(ls, p.pkg)
	if !ok {
		return []string{fmt.Sprintf("%s has no layer: place it in tools/layers", p.pkg)}
	}
	var problems []string
	for _, imp := range p.code {
		l, ok := layerOf(ls, imp)
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s imports %s, which has no layer: place it in tools/layers", p.pkg, imp))
		case l > own || l == own && !ls[own].sideways:
			problems = append(problems, fmt.Sprintf("%s (%s) imports %s (%s): an arrow that does not point down",
				p.pkg, ls[own].name, imp, ls[l].name))
		}
	}
	for _, imp := range p.tests {
		if l, ok := layerOf(ls, imp); ok && l >= indexOf(ls, harness) && l > own {
			problems = append(problems, fmt.Sprintf("%s's tests import %s (%s)", p.pkg, imp, ls[l].name))
		}
	}
	return problems
}

// layerOf is the index in ls of the layer holding pkg.
func layerOf(ls []layer, pkg string) (int, bool) {
	for i, l := range ls {
		for _, pattern := range l.packages {
			folder, isFolder := strings.CutSuffix(pattern, "/...")
			if pkg == pattern || isFolder && (pkg == folder || strings.HasPrefix(pkg, folder+"/")) {
				return i, true
			}
		}
	}
	return 0, false
}

// indexOf is the index of the layer named name, or len(ls).
func indexOf(ls []layer, name string) int {
	for i, l := range ls {
		if l.name == name {
			return i
		}
	}
	return len(ls)
}

// listImports asks go list for every package of the module and its
// imports of the module's packages.
func listImports() ([]imports, error) {
	cmd := exec.Command("go", "list", "-f",
		"{{.ImportPath}}|{{join .Imports \" \"}}|{{join .TestImports \" \"}} {{join .XTestImports \" \"}}", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list ./...: %w", err)
	}
	var pkgs []imports
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Split(line, "|")
		if len(fields) != 3 {
			return nil, fmt.Errorf("go list: unexpected line %q", line)
		}
		pkg := strings.TrimPrefix(fields[0], module)
		pkgs = append(pkgs, imports{pkg: pkg, code: ours(fields[1], pkg), tests: ours(fields[2], pkg)})
	}
	return pkgs, nil
}

// ours keeps the module's packages of a space-separated import list, less
// pkg itself (an external test imports the package it tests).
func ours(list, pkg string) []string {
	var out []string
	for _, imp := range strings.Fields(list) {
		if rel, ok := strings.CutPrefix(imp, module); ok && rel != pkg {
			out = append(out, rel)
		}
	}
	return out
}
