package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// twoItemKindsJob is a job of the shop with two item kinds: even (products
// of even IDs) and odd (the others), every rule that links products
// written twice, the even one first (a URL belongs to the first kind that
// claims it).
func twoItemKindsJob(name, base string) string {
	even := `"/p/\\d*[02468]$"`
	split := func(sel string) string {
		return fmt.Sprintf("      - {%s, kind: even, allow: %s}\n      - {%s, kind: odd}\n", sel, even, sel)
	}
	item := "    item: true\n    fields:\n      title: {css: \"h1\", required: true}\n    links:\n" + split(`css: "a.related"`)
	return fmt.Sprintf("name: %s\nseeds: [\"%s/\", {url: \"%s/api/products?page=1\", kind: api}]\nallow_private_networks: true\n", name, base, base) +
		"kinds:\n  start:\n    links:\n      - {css: \"nav.cats a\", kind: category}\n" +
		"  category:\n    links:\n      - {css: \"a.sub\", kind: list}\n" +
		"  list:\n    links:\n      - {css: \"a.next\", kind: list}\n" + split(`css: "a.product"`) +
		"  api:\n    format: json\n    links:\n      - {json: \"next\", kind: api}\n" + split(`json: "items.#.url"`) +
		"  even:\n" + item + "  odd:\n" + item +
		"dedup: {window: 168h, granularity: 24h, capacity: 100000, error_rate: 0.001}\nper_host_rps: 1000\nper_host_concurrency: 32\n"
}

// TestCluster_TwoItemKinds: a master and two slaves crawl the shop with a
// job of two item kinds (products of even and of odd IDs, both reached
// through lists, the API and each other's related links). Each kind's
// counters are its own: its products stored, the links to them on the
// shop's pages discovered, the rest duplicates; and the kinds add up to
// the job.
func TestCluster_TwoItemKinds(t *testing.T) {
	t.Parallel()
	env := newClusterEnv(t)
	shop, base, _ := serveShop(t)
	env.startMaster(t, "master")
	env.startSlave(t, 0)
	env.startSlave(t, 1)
	env.waitSlaves(t, 0, 1)
	path := filepath.Join(t.TempDir(), "two.yaml")
	if err := os.WriteFile(path, []byte(twoItemKindsJob("two", base)), 0o644); err != nil {
		t.Fatal(err)
	}
	env.submit(t, "two", path)
	st := env.wait(t, "two", 4*time.Minute)

	want := map[string]struct{ stored, discovered int64 }{}
	for id := 1; id <= shop.Products(); id++ {
		kind := "odd"
		if id%2 == 0 {
			kind = "even"
		}
		w := want[kind]
		w.stored++
		w.discovered += int64(shop.LinksTo(id))
		want[kind] = w
	}
	var stored, discovered, duplicates int64
	for _, kind := range []string{"even", "odd"} {
		k, w := st.Kinds[kind], want[kind]
		if k.Stored != w.stored || k.Discovered != w.discovered || k.Duplicates != w.discovered-w.stored ||
			k.Failed != 0 || k.Skipped != 0 || k.Cancelled != 0 {
			t.Errorf("kind %s: %+v, want %d stored of %d discovered, the rest duplicates", kind, k, w.stored, w.discovered)
		}
		stored, discovered, duplicates = stored+k.Stored, discovered+k.Discovered, duplicates+k.Duplicates
	}
	c := st.Counters
	if stored != c.Stored || discovered != c.Discovered || duplicates != c.Duplicates {
		t.Errorf("the item kinds add up to %d stored, %d discovered, %d duplicates; the job has %+v", stored, discovered, duplicates, c)
	}
	kinds := map[string]int{}
	for _, it := range env.results(t, "two") {
		kinds[it.Kind]++
		if !strings.Contains(it.URL, "/p/") {
			t.Errorf("item %s is not a product", it.URL)
		}
	}
	if kinds["even"] != int(want["even"].stored) || kinds["odd"] != int(want["odd"].stored) {
		t.Errorf("items by kind %v, want even %d, odd %d", kinds, want["even"].stored, want["odd"].stored)
	}
}
