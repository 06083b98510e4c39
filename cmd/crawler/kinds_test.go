package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/demosite"
	"github.com/crawler-dev/crawler/store"
)

// writeShopJob writes the shop's job file and returns its path.
func writeShopJob(t *testing.T, name, base string, sitemaps bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, []byte(demosite.ShopJobYAML(name, base, sitemaps)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCluster_Shop: a master and two slaves crawl the shop with its page
// kinds, once through its pages alone (categories, sub-categories,
// paginated lists, the JSON API's pages, the related links of products:
// some products are reached only through those two) and once with its
// sitemaps too; each time every product is stored once with the fields
// the shop's tally says, and the counters add up, per kind as well.
func TestCluster_Shop(t *testing.T) {
	t.Parallel()
	env := newClusterEnv(t)
	shop, base, _ := serveShop(t)
	tally := shop.Tally()
	env.startMaster(t, "master")
	env.startSlave(t, 0)
	env.startSlave(t, 1)
	env.waitSlaves(t, 0, 1)
	env.submit(t, "shop", writeShopJob(t, "shop", base, false))
	env.submit(t, "shop-sm", writeShopJob(t, "shop-sm", base, true))
	// a job with a field and a link rule that match nothing: warnings
	typos := strings.Replace(strings.Replace(demosite.ShopJobYAML("typos", base, false),
		`jsonld: "brand.name"`, `jsonld: "brand.nme"`, 1), `css: "a.related"`, `css: "a.relatd"`, 1)
	typoFile := filepath.Join(t.TempDir(), "typos.yaml")
	if err := os.WriteFile(typoFile, []byte(typos), 0o644); err != nil {
		t.Fatal(err)
	}
	env.submit(t, "typos", typoFile)

	for _, job := range []string{"shop", "shop-sm"} {
		st := env.wait(t, job, 4*time.Minute)
		checkShop(t, job, tally, st, env.results(t, job))
		if fails := env.failures(t, job); len(fails) != 0 {
			t.Errorf("%s: %d failures, first %+v", job, len(fails), fails[0])
		}
	}
	st := env.wait(t, "typos", 4*time.Minute)
	want := []string{"kinds.product.fields.brand: matched nothing on", "kinds.product.links[0]: matched nothing on"}
	if len(st.Warnings) != len(want) {
		t.Errorf("typos: warnings %q, want %q", st.Warnings, want)
	}
	for i := range want {
		if i < len(st.Warnings) && !strings.HasPrefix(st.Warnings[i], want[i]) {
			t.Errorf("typos: warning %q, want %q...", st.Warnings[i], want[i])
		}
	}
	// every product the sitemaps list was routed (the home page they list
	// too is left out by the entry's allow)
	urls := env.rdb.HGet(context.Background(), env.keys.Job("shop-sm").Stats(), cluster.StatSitemapURLs).Val()
	if want := fmt.Sprint(tally.SitemapURLs - 1); urls != want {
		t.Errorf("shop-sm: %s sitemap URLs routed, want %s", urls, want)
	}
}

// checkShop checks one crawl of the shop against its tally.
func checkShop(t *testing.T, job string, tally demosite.ShopTally, st client.Status, items []store.Item) {
	t.Helper()
	if st.State != "finished" {
		t.Fatalf("%s: state %q, want finished", job, st.State)
	}
	got := map[string]map[string]any{}
	for _, it := range items {
		u, err := url.Parse(it.URL)
		if err != nil {
			t.Fatal(err)
		}
		if got[u.Path] != nil {
			t.Errorf("%s: %s stored twice", job, u.Path)
		}
		if it.Kind != "product" {
			t.Errorf("%s: %s stored as kind %q, want product", job, u.Path, it.Kind)
		}
		got[u.Path] = it.Fields
	}
	if len(got) != len(tally.Items) {
		t.Errorf("%s: %d products stored, want %d", job, len(got), len(tally.Items))
	}
	for path, want := range tally.Items {
		if g, w := asJSON(t, got[path]), asJSON(t, want); g != w {
			t.Errorf("%s: %s fields\n got %s\nwant %s", job, path, g, w)
		}
	}
	c := st.Counters
	pages := int64(0)
	for _, n := range tally.Pages {
		pages += int64(n)
	}
	if c.Stored != int64(len(tally.Items)) || c.Failed != 0 || c.ListPages != pages || c.ListFailed != 0 {
		t.Errorf("%s: stored %d failed %d list pages %d (failed %d), want %d, 0, %d, 0",
			job, c.Stored, c.Failed, c.ListPages, c.ListFailed, len(tally.Items), pages)
	}
	if sum := c.Stored + c.Failed + c.Skipped + c.Duplicates + c.Cancelled; sum != c.Discovered {
		t.Errorf("%s: discovered %d != stored+failed+skipped+duplicates+cancelled %d: %+v", job, c.Discovered, sum, c)
	}
	if len(st.Warnings) != 0 {
		t.Errorf("%s: warnings %v, want none", job, st.Warnings)
	}
	checkKinds(t, job, tally, st)
}

// checkKinds checks the per-kind counters: each kind's pages, and that
// each adds up.
func checkKinds(t *testing.T, job string, tally demosite.ShopTally, st client.Status) {
	t.Helper()
	for kind, n := range tally.Pages {
		if k := st.Kinds[kind]; k.Stored != int64(n) || k.Failed != 0 {
			t.Errorf("%s: kind %s: %+v, want %d stored", job, kind, k, n)
		}
	}
	if k := st.Kinds["product"]; k.Stored != int64(len(tally.Items)) {
		t.Errorf("%s: kind product: %+v, want %d stored", job, k, len(tally.Items))
	}
	for kind, k := range st.Kinds {
		if sum := k.Stored + k.Failed + k.Skipped + k.Duplicates + k.Cancelled; sum != k.Discovered {
			t.Errorf("%s: kind %s does not add up: %+v", job, kind, k)
		}
	}
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRun_Shop: crawler run crawls the shop's job of page kinds whole on
// its embedded defaults, every product once with its fields.
func TestRun_Shop(t *testing.T) {
	t.Parallel()
	shop, _, jobFile := serveShop(t)
	out := filepath.Join(t.TempDir(), "items.jsonl")
	stdout, stderr, err := crawler(t, 3*time.Minute, "run", "--job", jobFile, "-o", out, "--log-level", "warn")
	if err != nil {
		t.Fatalf("crawler run: %v\nstdout %s\nstderr %s", err, stdout, tail(stderr, 4000))
	}
	tally := shop.Tally()
	got := map[string]string{}
	for _, it := range readItems(t, out) {
		u, _ := url.Parse(it.URL)
		if _, dup := got[u.Path]; dup {
			t.Errorf("%s written twice", u.Path)
		}
		got[u.Path] = asJSON(t, it.Fields)
	}
	if len(got) != len(tally.Items) {
		t.Errorf("%d items, want %d", len(got), len(tally.Items))
	}
	for path, want := range tally.Items {
		if w := asJSON(t, want); got[path] != w {
			t.Errorf("%s fields\n got %s\nwant %s", path, got[path], w)
		}
	}
}

// TestRun_nothingMatched: a job whose item links match nothing (a typo in
// a selector) exits non-zero, naming the rule that matched nothing, with
// kinds and in the short form.
func TestRun_nothingMatched(t *testing.T) {
	t.Parallel()
	_, base, _ := serveShop(t)
	for _, tc := range []struct{ name, rules, rule string }{
		{"kinds", "kinds:\n  start: {links: [{css: \"nav.cats a.typo\", kind: product}]}\n" +
			"  product: {item: true, fields: {title: {css: h1}}}\n", "kinds.start.links[0]"},
		{"short", "detail_link: {css: \"a.typo\"}\nfields: {title: {css: h1}}\n", "detail_link"},
	} {
		job := filepath.Join(t.TempDir(), tc.name+".yaml")
		yaml := "name: typo\nseeds: [\"" + base + "/\"]\nallow_private_networks: true\n" + tc.rules
		if err := os.WriteFile(job, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, err := crawler(t, 2*time.Minute, "run", "--job", job, "-o", filepath.Join(t.TempDir(), "o.jsonl"), "--log-level", "warn")
		if err == nil {
			t.Fatalf("%s: crawler run stored nothing and exited 0\nstdout %s", tc.name, stdout)
		}
		if !strings.Contains(stderr, "no item was stored") || !strings.Contains(stderr, tc.rule+": matched nothing") {
			t.Errorf("%s: stderr does not say why nothing was stored:\n%s", tc.name, tail(stderr, 2000))
		}
	}
}

// TestDemo_Shop: crawler demo --shop crawls the shop and says the crawl
// matches the shop's tally.
func TestDemo_Shop(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "shop.jsonl")
	stdout, stderr, err := crawler(t, 3*time.Minute, "demo", "--shop", "-o", out, "--log-level", "warn")
	if err != nil {
		t.Fatalf("crawler demo --shop: %v\nstdout %s\nstderr %s", err, stdout, tail(stderr, 4000))
	}
	shop := demosite.NewShop(demosite.ShopOptions{})
	n := len(shop.Tally().Items)
	for _, want := range []string{"demo shop at http://127.0.0.1:", "job shop: finished",
		fmt.Sprintf("expected: %d products stored; got %d stored, 0 failed", n, n), "every link accounted for", ": true"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("demo output lacks %q:\n%s", want, stdout)
		}
	}
	if got := len(readItems(t, out)); got != n {
		t.Errorf("%d items in %s, want %d", got, out, n)
	}
}

// TestFaults_KillShop: kill -9 one of two slaves, or the master (started
// again), a third of the way through a crawl of a larger shop; the job
// still stores every product once with its fields, the links its item
// pages held followed, and every counter adds up, per kind too.
func TestFaults_KillShop(t *testing.T) {
	t.Parallel()
	for _, victim := range []string{"slave", "master"} {
		t.Run(victim, func(t *testing.T) {
			t.Parallel()
			env := newClusterEnv(t)
			shop := demosite.NewShop(demosite.ShopOptions{Categories: 4, SubCategories: 3, Products: 50, PerPage: 10})
			srv := httptest.NewServer(shop)
			t.Cleanup(srv.Close)
			tally := shop.Tally()
			procs := map[string]*proc{"master": env.startMaster(t, "master")}
			env.startSlave(t, 0)
			procs["slave"] = env.startSlave(t, 1)
			env.waitSlaves(t, 0, 1)
			env.submit(t, "shop", writeShopJob(t, "shop", srv.URL, true))
			env.waitProgress(t, "shop", "a third stored", func(c client.Counters) bool { return c.Stored >= int64(len(tally.Items)/3) })
			if err := procs[victim].cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			if victim == "master" {
				<-procs[victim].done
				env.startMaster(t, "master")
			}
			st := env.wait(t, "shop", 4*time.Minute)
			checkShop(t, "shop", tally, st, env.results(t, "shop"))
		})
	}
}

// TestRun_RequiredAndJSONItems: an item page without a required field is
// recorded as failed with kind missing_field (and the run, having stored
// others, succeeds); an item kind of format json is fetched and its
// fields read with json paths, typed.
func TestRun_RequiredAndJSONItems(t *testing.T) {
	t.Parallel()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte(`<a class="p" href="/p/1">1</a><a class="p" href="/p/2">2</a>`))
		case "/p/1":
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte(`<h1>One</h1><span class="price">$1,299.00</span>`))
		case "/p/2":
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte(`<span class="price">3</span>`))
		case "/j/1":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"name": "Jay", "price": "1.299,50 €"}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(site.Close)
	job := filepath.Join(t.TempDir(), "req.yaml")
	yaml := "name: req\nseeds: [\"" + site.URL + "/\", {url: \"" + site.URL + "/j/1\", kind: jitem}]\nallow_private_networks: true\n" +
		"kinds:\n  start: {links: [{css: a.p, kind: product}]}\n" +
		"  product: {item: true, fields: {title: {css: h1, required: true}, price: {css: .price, type: number}}}\n" +
		"  jitem: {item: true, format: json, fields: {title: {json: name, required: true}, price: {json: price, type: number}}}\n"
	if err := os.WriteFile(job, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "items.jsonl")
	stdout, stderr, err := crawler(t, 2*time.Minute, "run", "--job", job, "-o", out, "--log-level", "warn")
	if err != nil {
		t.Fatalf("crawler run: %v\nstdout %s\nstderr %s", err, stdout, tail(stderr, 4000))
	}
	got := map[string]string{}
	for _, it := range readItems(t, out) {
		got[strings.TrimPrefix(it.URL, site.URL)] = asJSON(t, it.Fields)
	}
	want := map[string]string{"/p/1": `{"price":1299,"title":"One"}`, "/j/1": `{"price":1299.5,"title":"Jay"}`}
	if len(got) != len(want) || got["/p/1"] != want["/p/1"] || got["/j/1"] != want["/j/1"] {
		t.Errorf("items = %v, want %v", got, want)
	}
	failures, err := os.ReadFile(store.FailuresPath(out))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(string(failures)), "\n"); len(lines) != 1 ||
		!strings.Contains(lines[0], `"kind":"missing_field"`) || !strings.Contains(lines[0], "/p/2") || !strings.Contains(lines[0], "title") {
		t.Errorf("failures = %s, want /p/2 failed as missing_field naming title", failures)
	}
}

// TestClient_cancelKinds: a job with page kinds cancelled mid-crawl adds
// up when finished, overall and per kind, with list pages among the
// cancelled.
func TestClient_cancelKinds(t *testing.T) {
	t.Parallel()
	env := newClusterEnv(t)
	shop := demosite.NewShop(demosite.ShopOptions{Categories: 4, SubCategories: 3, Products: 50, PerPage: 5})
	srv := httptest.NewServer(shop)
	t.Cleanup(srv.Close)
	env.startMaster(t, "master")
	env.startSlave(t, 0)
	env.waitSlaves(t, 0)
	yaml := strings.Replace(demosite.ShopJobYAML("slowshop", srv.URL, true), "per_host_rps: 1000", "per_host_rps: 25", 1)
	path := filepath.Join(t.TempDir(), "slowshop.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	env.submit(t, "slowshop", path)
	env.waitProgress(t, "slowshop", "20 stored", func(c client.Counters) bool { return c.Stored >= 20 })
	env.cancel(t, "slowshop")
	st := env.wait(t, "slowshop", 2*time.Minute)
	c := st.Counters
	if st.CancelledAt == "" || c.Discovered != c.Settled() || c.Cancelled == 0 {
		t.Errorf("after cancel: cancelled_at %q, counters %+v: want some cancelled and discovered = settled", st.CancelledAt, c)
	}
	listCancelled := int64(0)
	for kind, k := range st.Kinds {
		if sum := k.Stored + k.Failed + k.Skipped + k.Duplicates + k.Cancelled; sum != k.Discovered {
			t.Errorf("kind %s does not add up: %+v", kind, k)
		}
		if kind != "product" {
			listCancelled += k.Cancelled
		}
	}
	if listCancelled == 0 {
		t.Errorf("no list page cancelled: %+v", st.Kinds)
	}
}

// TestPrintStatus_kinds: client status prints each kind's counters and
// the warnings.
func TestPrintStatus_kinds(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	printStatus(&b, &client.Status{Job: "shop", State: "finished",
		Kinds:    map[string]client.KindCounts{"list": {Discovered: 3, Stored: 2, Duplicates: 1}, "category": {Discovered: 1, Stored: 1}},
		Warnings: []string{"kinds.product.fields.brand: matched nothing on 4 pages of kind product"}}, false)
	for _, want := range []string{
		"  kind category: discovered 1 = stored 1 + failed 0 + skipped 0 + duplicates 0 + cancelled 0\n  kind list: discovered 3 = stored 2",
		"  warning: kinds.product.fields.brand: matched nothing on 4 pages of kind product\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, b.String())
		}
	}
}
