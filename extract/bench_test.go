package extract

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/crawler-dev/crawler/jobspec"
)

// BenchmarkHostile measures issue 18's hostile selector on n nested divs,
// parse included: goquery (cascadia's backtracking, ~n^6) beside this
// package's set-at-a-time evaluation, which visits each element twice per
// compound. Run with
//
//	go test -run '^$' -bench Hostile ./extract/
//
// goquery is measured up to 40 levels only: at 100 it takes about a minute.
func BenchmarkHostile(b *testing.B) {
	for _, n := range []int{20, 30, 40, 100, 300} {
		page := hostilePage(n)
		if n <= 40 {
			b.Run(fmt.Sprintf("goquery/n=%d", n), func(b *testing.B) {
				for b.Loop() {
					doc, err := goquery.NewDocumentFromReader(bytes.NewReader(page))
					if err != nil {
						b.Fatal(err)
					}
					doc.Find(hostileSelector)
				}
			})
		}
		b.Run(fmt.Sprintf("extract/n=%d", n), func(b *testing.B) {
			kind := hostileKind(b)
			var work int64
			for b.Loop() {
				res, err := kind.Extract(context.Background(), "https://example.com/", page)
				if err != nil {
					b.Fatal(err)
				}
				work = res.Work
			}
			b.ReportMetric(float64(work), "work/op")
		})
	}
}

func hostileKind(b *testing.B) *Kind {
	return compileKinds(b, map[string]jobspec.PageKind{"k": {Item: true,
		Fields: map[string]jobspec.FieldRule{"x": {CSS: hostileSelector}}}}).Kind("k")
}

// BenchmarkPage measures the pages a crawl sees, goquery beside this
// package: a list page's links and a detail page's fields, parse
// included, as the master and the slaves run them.
func BenchmarkPage(b *testing.B) {
	list, detail := readTestdata(b, "list.html"), readTestdata(b, "detail.html")
	b.Run("list/goquery", func(b *testing.B) {
		for b.Loop() {
			doc, err := goquery.NewDocumentFromReader(bytes.NewReader(list))
			if err != nil {
				b.Fatal(err)
			}
			doc.Find(".item a").Each(func(int, *goquery.Selection) {})
			doc.Find("a.next").Each(func(int, *goquery.Selection) {})
		}
	})
	spec := &jobspec.Job{NextLink: &jobspec.LinkRule{CSS: "a.next"}, DetailLink: &jobspec.LinkRule{CSS: ".item a"},
		Fields: detailRules}
	rules, err := CompileJob(spec)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("list/extract", func(b *testing.B) {
		for b.Loop() {
			if _, err := rules.Kind(jobspec.KindStart).Extract(context.Background(), "https://example.com/list/2", list); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("detail/goquery", func(b *testing.B) {
		for b.Loop() {
			doc, err := goquery.NewDocumentFromReader(bytes.NewReader(detail))
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range detailRules {
				doc.Find(r.CSS).Each(func(int, *goquery.Selection) {})
			}
		}
	})
	b.Run("detail/extract", func(b *testing.B) {
		for b.Loop() {
			if _, err := rules.Kind(jobspec.KindDetail).Extract(context.Background(), "https://example.com/detail/7", detail); err != nil {
				b.Fatal(err)
			}
		}
	})
}
