package sitemap

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestWalker_cut (issue 29, item 8): a sitemap its Fetch cut at the size
// limit (ErrCut) is read as far as it goes and counted truncated, not
// failed: its whole entries are pages, an entry the cut broke off is not,
// whether the file is XML, text or gzipped text.
func TestWalker_cut(t *testing.T) {
	var lines strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&lines, "https://shop.example/p/%d\n", i)
	}
	whole := map[string]bool{}
	for _, l := range strings.Fields(lines.String()) {
		whole[l] = true
	}
	zipped := gzipped(t, []byte(lines.String()))
	for _, tc := range []struct {
		name string
		body string
		want []string // nil: check only that every page is one of the file's
	}{
		{"text cut in a line", "https://shop.example/p/1\nhttps://shop.example/p/2\nhttps://shop.example/p/3", []string{"https://shop.example/p/1", "https://shop.example/p/2"}},
		{"text cut at a line's end", "https://shop.example/p/1\nhttps://shop.example/p/2\n", []string{"https://shop.example/p/1", "https://shop.example/p/2"}},
		{"text cut in the scheme", "https://shop.example/p/1\nht", []string{"https://shop.example/p/1"}},
		{"xml cut in a loc", `<urlset><url><loc>https://shop.example/p/1</loc></url><url><loc>https://shop.example/p/2</loc></url><url><loc>https://shop.ex`,
			[]string{"https://shop.example/p/1", "https://shop.example/p/2"}},
		{"gzipped text cut", string(zipped[:len(zipped)/2]), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &Walker{Fetch: func(context.Context, string) ([]byte, error) { return []byte(tc.body), ErrCut }}
			var got []string
			st, err := w.Walk(context.Background(), "https://shop.example/sitemap.xml", func(p Page) error {
				got = append(got, p.URL)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if st.Sitemaps != 1 || st.Failed != 0 || st.Truncated != 1 || fmt.Sprint(st.TruncatedURLs) != "[https://shop.example/sitemap.xml]" {
				t.Errorf("stats %+v, want one sitemap read, truncated, none failed", st)
			}
			if tc.want != nil && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("pages %q, want %q", got, tc.want)
			}
			for _, u := range got {
				if !whole[u] {
					t.Errorf("page %q is not one the file lists: an entry broken off", u)
				}
			}
			if tc.want == nil && (len(got) < 100 || len(got) == len(whole)) {
				t.Errorf("%d pages of a file cut in half, want its first part", len(got))
			}
		})
	}
}
