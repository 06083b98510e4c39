package robots

import (
	"reflect"
	"testing"
)

func TestSitemaps(t *testing.T) {
	body := []byte("User-agent: *\nDisallow: /cart\nSitemap: https://shop.example/sitemap.xml\n\n" +
		"# comment\nsitemap:https://shop.example/news.xml.gz\nUser-agent: crawler\nAllow: /\n")
	want := []string{"https://shop.example/sitemap.xml", "https://shop.example/news.xml.gz"}
	if got := Sitemaps(body); !reflect.DeepEqual(got, want) {
		t.Errorf("Sitemaps = %q, want %q", got, want)
	}
	if got := Sitemaps([]byte("User-agent: *\nDisallow:\n")); len(got) != 0 {
		t.Errorf("Sitemaps of a file without Sitemap lines = %q, want none", got)
	}
}
