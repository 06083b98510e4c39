package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/internal/demosite"
	"github.com/crawler-dev/crawler/jobspec"
)

// runDemoShop crawls the demo shop with its job of page kinds (categories,
// sub-categories, paginated lists, a JSON API, products with related
// links, its sitemaps) and compares the crawl with the shop's tally.
func runDemoShop(cmd *cobra.Command, a *app, cfg runConfig, listen string) error {
	shop := demosite.NewShop(demosite.ShopOptions{})
	base, closeShop, err := serveHandler(listen, shop)
	if err != nil {
		return err
	}
	defer closeShop()
	spec, err := jobspec.Parse(strings.NewReader(demosite.ShopJobYAML("shop", base, true)))
	if err != nil {
		return fmt.Errorf("demo shop job: %w", err)
	}
	fmt.Fprintf(reportWriter(cmd, cfg), "demo shop at %s: %d products\n", base, shop.Products())
	return crawlHere(cmd, a, cfg, spec, func(w io.Writer, st *client.Status) { printShopCheck(w, shop, st) })
}

// printShopCheck compares the crawl with what the shop holds.
func printShopCheck(w io.Writer, shop *demosite.Shop, st *client.Status) {
	tally := shop.Tally()
	c := st.Counters
	fmt.Fprintf(w, "expected: %d products stored; got %d stored, %d failed\n", len(tally.Items), c.Stored, c.Failed)
	for _, kind := range []string{"start", "category", "list", "api"} {
		k := st.Kinds[kind]
		fmt.Fprintf(w, "kind %s: expected %d pages; got %d read, %d failed\n", kind, tally.Pages[kind], k.Stored, k.Failed)
	}
	fmt.Fprintf(w, "every link accounted for: discovered %d = stored %d + failed %d + skipped %d + duplicates %d: %v\n",
		c.Discovered, c.Stored, c.Failed, c.Skipped, c.Duplicates, c.Discovered == c.Settled())
}

// warningsNote is the job's warnings, for an error saying nothing was
// stored: the link rules and fields that matched nothing say why.
func warningsNote(st *client.Status) string {
	if len(st.Warnings) == 0 {
		return ""
	}
	return " (" + strings.Join(st.Warnings, "; ") + ")"
}
