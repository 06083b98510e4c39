package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/demosite"
	"github.com/crawler-dev/crawler/jobspec"
)

// serveShop serves the demo shop on loopback and writes its job file.
func serveShop(t *testing.T) (shop *demosite.Shop, base, job string) {
	t.Helper()
	shop = demosite.NewShop(demosite.ShopOptions{})
	srv := httptest.NewServer(shop)
	t.Cleanup(srv.Close)
	job = filepath.Join(t.TempDir(), "shop.yaml")
	if err := os.WriteFile(job, []byte(demosite.ShopJobYAML("shop", srv.URL, true)), 0o644); err != nil {
		t.Fatal(err)
	}
	return shop, srv.URL, job
}

// checkJSON runs crawler check in this process with --json.
func checkJSON(t *testing.T, o checkOptions) (checkReport, error) {
	t.Helper()
	o.json = true
	var out bytes.Buffer
	err := runCheck(context.Background(), o, &out)
	var rep checkReport
	if out.Len() > 0 {
		if jerr := json.Unmarshal(out.Bytes(), &rep); jerr != nil {
			t.Fatalf("check --json printed %q: %v", out.String(), jerr)
		}
	}
	return rep, err
}

// TestCheck_shop checks a page of every kind of the demo shop with the
// shop's own job: the kind decided, each rule's links, the fields.
func TestCheck_shop(t *testing.T) {
	t.Parallel()
	shop, base, job := serveShop(t)
	for _, tc := range []struct {
		url, kind, wantKind string
		links               []int // links kept per rule
	}{
		{base + "/", "", "start", []int{3}},
		{base + "/api/products?page=1", "", "api", []int{4, 1}},
		{base + "/c/phones1", "category", "category", []int{2}},
		{base + "/c/phones1/s1", "list", "list", []int{1, 5, 0}}, // the css rule's links are the xpath rule's already
		{base + "/p/7", "", "product", []int{2}},
		{base + "/p/9", "product", "product", []int{2}},
	} {
		t.Run(strings.TrimPrefix(tc.url, base), func(t *testing.T) {
			rep, err := checkJSON(t, checkOptions{job: job, url: tc.url, kind: tc.kind})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Kind != tc.wantKind || rep.Status != 200 {
				t.Errorf("kind %q (%s), status %d; want %q, 200", rep.Kind, rep.KindReason, rep.Status, tc.wantKind)
			}
			var kept []int
			for _, r := range rep.Rules {
				kept = append(kept, len(r.Links))
			}
			if !reflect.DeepEqual(kept, tc.links) {
				t.Errorf("links kept per rule = %v, want %v (%+v)", kept, tc.links, rep.Rules)
			}
		})
	}
	rep, err := checkJSON(t, checkOptions{job: job, url: base + "/p/7"})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(shop.Fields(7))
	got, _ := json.Marshal(rep.Fields)
	if string(got) != string(want) || len(rep.FieldErrors) > 0 || len(rep.Missing) > 0 {
		t.Errorf("fields of /p/7 = %s (errors %v, missing %v), want %s", got, rep.FieldErrors, rep.Missing, want)
	}
}

// TestCheck_failures: a page that cannot be fetched, a kind the job does
// not have, and a missing required field each fail the command, naming
// the cause.
func TestCheck_failures(t *testing.T) {
	t.Parallel()
	_, base, job := serveShop(t)
	for _, tc := range []struct {
		o    checkOptions
		want string
	}{
		{checkOptions{job: job, url: base + "/p/99999"}, "404"},
		{checkOptions{job: job, url: base + "/p/1", kind: "products"}, `--kind: "products" is not a kind`},
		{checkOptions{job: job}, "--url"},
		{checkOptions{job: job, url: base + "/", kind: "product"}, "required field(s) title"},
	} {
		_, err := checkJSON(t, tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("check %+v = %v, want an error with %q", tc.o, err, tc.want)
		}
		if tc.o.url != "" && err != nil && strings.Count(err.Error(), tc.o.url) > 1 {
			t.Errorf("check %+v = %v: the URL more than once", tc.o, err)
		}
	}
}

// TestCheck_command runs the binary: a product page prints its fields and
// exits 0; a page without the required title exits non-zero and says so.
func TestCheck_command(t *testing.T) {
	t.Parallel()
	_, base, job := serveShop(t)
	binary(t) // built before the command's time starts
	stdout, stderr, err := crawler(t, time.Minute, "check", "--job", job, "--url", base+"/p/3")
	if err != nil {
		t.Fatalf("crawler check: %v\n%s%s", err, stdout, stderr)
	}
	for _, want := range []string{"kind    product", "-> product: 2 found, 2 kept", `"SKU-00003"`, "title", "work    "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("check output lacks %q:\n%s", want, stdout)
		}
	}
	stdout, stderr, err = crawler(t, time.Minute, "check", "--job", job, "--url", base+"/", "--kind", "product", "--json")
	if err == nil || !strings.Contains(stderr, "missing_field") || !json.Valid([]byte(stdout)) {
		t.Errorf("check of a page without title: err %v, stdout %q, stderr %q; want a non-zero exit, JSON and the cause", err, stdout, stderr)
	}
}

// TestCheck_kindFromRules: a page that is no seed and that no allow
// pattern matches takes the kind of the rule that leads to it from the
// seeds, and the report says which rule and from where; a page no rule
// leads to needs --kind, whatever the item kinds.
func TestCheck_kindFromRules(t *testing.T) {
	t.Parallel()
	_, base, job := serveShop(t)
	for _, tc := range []struct{ path, kind, reason string }{
		{"/", "start", "the seed's kind"},
		{"/c/phones1", "category", "kinds.start.links[0] leads to it from " + base + "/"},
		{"/c/phones1/s1", "list", "kinds.category.links[0] leads to it from " + base + "/c/phones1"},
		{"/p/7", "product", "kinds.list.links[2] leads to it: its allow pattern matches the URL"},
	} {
		rep, err := checkJSON(t, checkOptions{job: job, url: base + tc.path})
		if err != nil || rep.Kind != tc.kind || rep.KindReason != tc.reason {
			t.Errorf("check %s: kind %q (%s), %v; want %q (%s)", tc.path, rep.Kind, rep.KindReason, err, tc.kind, tc.reason)
		}
	}
	_, err := checkJSON(t, checkOptions{job: job, url: base + "/nowhere"})
	if err == nil || !strings.Contains(err.Error(), "no rule leads to it") || !strings.Contains(err.Error(), "give --kind") {
		t.Errorf("check of a page no rule leads to: %v; want an error asking for --kind", err)
	}
	var out bytes.Buffer
	if err := runCheck(context.Background(), checkOptions{job: job, url: base + "/c/phones1/s1"}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "kind    list (kinds.category.links[0] leads to it from ") {
		t.Errorf("check output does not say how it chose the kind:\n%s", out.String())
	}
}

// TestPageKind: --kind, else the seed's kind, else the one kind the
// allow patterns matching the URL lead to; else the kind is unknown
// without reading pages (walkKind reads them).
func TestPageKind(t *testing.T) {
	t.Parallel()
	spec, err := jobspec.Parse(strings.NewReader(`name: two
seeds: ["https://a.example/", {url: "https://a.example/api", kind: api}]
kinds:
  start: {links: [{css: "a.p", kind: product, allow: "/p/"}, {css: "a.r", kind: review}]}
  api: {format: json, links: [{json: "next", kind: api}]}
  product: {item: true, fields: {t: {css: h1}}}
  review: {item: true, fields: {t: {css: h1}}}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ url, given, want string }{
		{"https://a.example/x", "review", "review"},
		{"https://A.example/", "", "start"},
		{"https://a.example/api", "", "api"},
		{"https://a.example/p/1", "", "product"},
		{"https://a.example/r/1", "", ""},
	} {
		got, reason, err := pageKind(spec, tc.url, tc.given)
		if got != tc.want || (tc.want == "" && !errors.Is(err, errKindUnknown)) {
			t.Errorf("pageKind(%s, %q) = %q (%s), %v; want %q", tc.url, tc.given, got, reason, err, tc.want)
		}
	}
}
