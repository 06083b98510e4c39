package client

import (
	"context"
	"strings"
	"testing"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/jobspec"
)

// TestSubmit_kindsEntries: a job with page kinds, seeds of a kind and
// sitemaps is accepted, and its round starts from its seeds, each with its
// kind, and one sitemaps entry per sitemap (per seed host for url: robots).
func TestSubmit_kindsEntries(t *testing.T) {
	c, rdb, keys := newTestClient(t)
	spec, err := jobspec.Parse(strings.NewReader(`name: m-kinds
seeds: ["https://a.example/", "https://a.example/x", {url: "https://b.example/p/1", kind: product}]
sitemaps: [{url: robots, kind: product}, {url: "https://c.example/sitemap.xml", kind: product}]
allowed_domains: [a.example, b.example, c.example]
kinds:
  start: {links: [{css: "a", kind: product}]}
  product: {item: true, fields: {title: {css: h1}}}
`))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Submit(ctx, spec); err != nil {
		t.Fatalf("Submit: %v", err)
	}
	entries, err := rdb.LRange(ctx, keys.Job(spec.Name).Seeds(), 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	var got []cluster.ListPage
	for _, e := range entries {
		p, err := cluster.DecodeListPage(e[41:])
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p)
	}
	want := []cluster.ListPage{
		{URL: "https://a.example/"}, {URL: "https://a.example/x"}, {URL: "https://b.example/p/1", Kind: "product"},
		{URL: "https://a.example/", Kind: "product", Sitemap: 1}, {URL: "https://b.example/p/1", Kind: "product", Sitemap: 1},
		{URL: "https://c.example/sitemap.xml", Kind: "product", Sitemap: 2},
	}
	if len(got) != len(want) {
		t.Fatalf("frontier entries = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}
