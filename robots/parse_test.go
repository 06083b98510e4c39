package robots

import (
	"bytes"
	"net/url"
	"testing"
	"time"

	"github.com/jimsmart/grobotstxt"
)

func TestFile_Allowed(t *testing.T) {
	for _, tc := range []struct {
		name, body, path string
		want             bool
	}{
		{"disallow", "User-agent: *\nDisallow: /private\n", "/private/x", false},
		{"other path", "User-agent: *\nDisallow: /private\n", "/public", true},
		{"allow beats equal disallow listed first", "User-agent: *\nDisallow: /page\nAllow: /page\n", "/page", true},
		{"allow beats equal disallow listed last", "User-agent: *\nAllow: /page\nDisallow: /page\n", "/page", true},
		{"equal length wildcards, allow wins", "User-agent: *\nDisallow: /*.php\nAllow: /*.php\n", "/a.php", true},
		{"longer disallow wins", "User-agent: *\nAllow: /a\nDisallow: /a/b\n", "/a/b/c", false},
		{"longer allow wins", "User-agent: *\nDisallow: /a\nAllow: /a/b\n", "/a/b/c", true},
		{"end anchor", "User-agent: *\nDisallow: /*.pdf$\n", "/x.pdf", false},
		{"end anchor, more after", "User-agent: *\nDisallow: /*.pdf$\n", "/x.pdf?y", true},
		{"empty disallow allows", "User-agent: *\nDisallow:\n", "/x", true},
		{"own group beats global", "User-agent: *\nDisallow: /\n\nUser-agent: crawler\nAllow: /\n", "/x", true},
		{"own group without rule for path still beats global", "User-agent: *\nDisallow: /\n\nUser-agent: Crawler\nDisallow: /admin\n", "/x", true},
		{"prefix of token is another agent", "User-agent: crawl\nDisallow: /\n", "/x", true},
		{"groups of one agent merge", "User-agent: crawler\nDisallow: /a\n\nUser-agent: crawler\nDisallow: /b\n", "/b", false},
		{"two agents one group", "User-agent: other\nUser-agent: crawler\nDisallow: /a\n", "/a", false},
		{"rule before any agent is ignored", "Disallow: /a\nUser-agent: *\nDisallow: /b\n", "/a", true},
		{"bad crawl-delay does not lose the file", "User-agent: *\nCrawl-delay: soon\nDisallow: /private\n", "/private", false},
		{"non-ascii pattern is percent-encoded", "User-agent: *\nDisallow: /café\n", "/caf%C3%A9", false},
		{"lower-case escapes normalised", "User-agent: *\nDisallow: /a%3cb\n", "/a%3Cb", false},
		{"index.html allows its directory", "User-agent: *\nDisallow: /d/\nAllow: /d/index.html\n", "/d/", true},
		{"no colon", "User-agent *\nDisallow /x\n", "/x", false},
		{"empty file", "", "/x", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Parse([]byte(tc.body))
			if got := f.Allowed("crawler", tc.path); got != tc.want {
				t.Errorf("Allowed(%q) = %v, want %v", tc.path, got, tc.want)
			}
			// grobotstxt is the reference once its escape bug is worked
			// around (see upperEscapes).
			ref := grobotstxt.AgentAllowed(string(upperEscapes([]byte(tc.body))), "crawler", "http://h.test"+tc.path)
			if ref != tc.want {
				t.Errorf("grobotstxt says %v, the test %v: fix the test", ref, tc.want)
			}
		})
	}
}

func TestFile_CrawlDelay(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       time.Duration
	}{
		{"global", "User-agent: *\nCrawl-delay: 2\n", 2 * time.Second},
		{"fraction", "User-agent: *\nCrawl-delay: 0.5\n", 500 * time.Millisecond},
		{"own group wins", "User-agent: *\nCrawl-delay: 10\n\nUser-agent: crawler\nCrawl-delay: 1\n", time.Second},
		{"own group without delay means none", "User-agent: *\nCrawl-delay: 10\n\nUser-agent: crawler\nDisallow: /a\n", 0},
		{"largest of merged groups", "User-agent: crawler\nCrawl-delay: 1\n\nUser-agent: crawler\nCrawl-delay: 3\n", 3 * time.Second},
		{"negative ignored", "User-agent: *\nCrawl-delay: -4\n", 0},
		{"junk ignored", "User-agent: *\nCrawl-delay: NaN\n", 0},
		{"delay belongs to the agents above it", "User-agent: *\nCrawl-delay: 10\nUser-agent: crawler\nCrawl-delay: 1\nDisallow: /x\n", time.Second},
		{"huge ignored", "User-agent: *\nCrawl-delay: 1e300\n", 0},
		{"other agent", "User-agent: other\nCrawl-delay: 5\n", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Parse([]byte(tc.body)).CrawlDelay("crawler"); got != tc.want {
				t.Errorf("CrawlDelay = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestProductToken(t *testing.T) {
	for in, want := range map[string]string{
		"crawler/1.0 (+https://example.com/bot)": "crawler",
		"Googlebot":                              "Googlebot",
		"  my-bot_2 x":                           "my-bot_2",
		"":                                       "",
		"(weird)":                                "",
	} {
		if got := ProductToken(in); got != want {
			t.Errorf("ProductToken(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPathOf(t *testing.T) {
	for in, want := range map[string]string{
		"http://h.test":                 "/",
		"http://h.test/a/b?x=1#frag":    "/a/b?x=1",
		"http://h.test/a;p?q":           "/a;p?q",
		"https://h.test:8443/caf%C3%A9": "/caf%C3%A9",
		"http://h.test/a%3cb?q=%2f":     "/a%3Cb?q=%2F",
		"http://h.test/café":            "/caf%C3%A9",
	} {
		u, err := url.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := PathOf(u); got != want {
			t.Errorf("PathOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParse_Truncates(t *testing.T) {
	body := []byte("User-agent: *\n")
	body = append(body, bytes.Repeat([]byte("#"), MaxBodyBytes-len(body)-20)...)
	body = append(body, "\nDisallow: /private-area-beyond-the-limit\n"...)
	f := Parse(body)
	if !f.Allowed("crawler", "/private") {
		t.Errorf("a rule cut in half at the 500 KiB limit was applied as /private...")
	}
	if !f.Allowed("crawler", "/private-area-beyond-the-limit") {
		t.Errorf("a rule past the 500 KiB limit was applied")
	}
	if Parse([]byte("User-agent: *\nDisallow: /private-area\n")).Allowed("crawler", "/private-area") {
		t.Errorf("the same rule within the limit is not applied: the test proves nothing")
	}
}
