package canon

import (
	"errors"
	"net/url"
	"testing"
)

func TestURL(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"case of scheme and host", "HTTP://Example.COM/Path", "http://example.com/Path"},
		{"empty path", "http://example.com", "http://example.com/"},
		{"default http port", "http://example.com:80/a", "http://example.com/a"},
		{"default https port", "https://example.com:443/a", "https://example.com/a"},
		{"other port kept", "https://example.com:8443/a", "https://example.com:8443/a"},
		{"fragment dropped", "http://example.com/a#section", "http://example.com/a"},
		{"query sorted", "http://example.com/?b=2&a=1&c=3", "http://example.com/?a=1&b=2&c=3"},
		{"repeated keys sorted by value", "http://example.com/?a=2&b=1&a=1", "http://example.com/?a=1&a=2&b=1"},
		{"blank values kept", "http://example.com/?b=&a", "http://example.com/?a=&b="},
		{"empty query dropped", "http://example.com/a?", "http://example.com/a"},
		{"IDN host", "http://Bücher.example/x", "http://xn--bcher-kva.example/x"},
		{"chinese IDN host", "http://例子.测试/", "http://xn--fsqu00a.xn--0zwm56d/"},
		{"unreserved escapes decoded", "http://example.com/%7Euser/%61bc", "http://example.com/~user/abc"},
		{"escape hex uppercased", "http://example.com/a%2fb?q=%e4%b8%ad", "http://example.com/a%2Fb?q=%E4%B8%AD"},
		{"non-ASCII path encoded", "http://example.com/新闻/a b", "http://example.com/%E6%96%B0%E9%97%BB/a%20b"},
		{"non-ASCII query encoded", "http://example.com/?q=新闻", "http://example.com/?q=%E6%96%B0%E9%97%BB"},
		{"encoded separators kept", "http://example.com/?a=1%262&b=%3D", "http://example.com/?a=1%262&b=%3D"},
		{"plus kept", "http://example.com/?q=a+b", "http://example.com/?q=a+b"},
		{"dot segments", "http://example.com/a/./b/../c/", "http://example.com/a/c/"},
		{"dot segments past root", "http://example.com/../../a", "http://example.com/a"},
		{"encoded dots are dots", "http://example.com/a/%2E%2E/b", "http://example.com/b"},
		{"stray percent encoded", "http://example.com/?q=100%", "http://example.com/?q=100%25"},
		{"ipv6 host", "http://[2001:DB8::1]:80/", "http://[2001:db8::1]/"},
		{"userinfo kept", "http://user:pw@Example.com/", "http://user:pw@example.com/"},
		{"spaces around", "  http://example.com/a  ", "http://example.com/a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := URL(tt.in)
			if err != nil {
				t.Fatalf("URL(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("URL(%q) = %q, want %q", tt.in, got, tt.want)
			}
			again, err := URL(got)
			if err != nil || again != got {
				t.Errorf("not idempotent: URL(%q) = %q, %v", got, again, err)
			}
		})
	}
}

func TestURL_errors(t *testing.T) {
	for _, in := range []string{"ftp://example.com/", "mailto:a@example.com", "/relative/path", "http:///nohost", "http://exa mple.com/", "http://example.com:8x/", "http://Xn--/"} {
		t.Run(in, func(t *testing.T) {
			_, err := URL(in)
			if err == nil {
				t.Fatalf("URL(%q): no error", in)
			}
		})
	}
	t.Run("names the scheme", func(t *testing.T) {
		_, err := URL("ftp://example.com/")
		if !errors.Is(err, ErrUnsupportedURL) {
			t.Fatalf("err = %v, want ErrUnsupportedURL", err)
		}
	})
}

func TestRef(t *testing.T) {
	base, err := url.Parse("https://News.example.com/list/page/2?sort=new#top")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ ref, want string }{
		{"../article/1?b=2&a=1#c", "https://news.example.com/list/article/1?a=1&b=2"},
		{"/a/./b", "https://news.example.com/a/b"},
		{"?page=3", "https://news.example.com/list/page/2?page=3"},
		{"//Other.Example.com:443/x", "https://other.example.com/x"},
		{"detail.html", "https://news.example.com/list/page/detail.html"},
		{"#frag", "https://news.example.com/list/page/2?sort=new"},
		{"http://abs.example.com", "http://abs.example.com/"},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			got, err := Ref(base, tt.ref)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Ref(%q) = %q, want %q", tt.ref, got, tt.want)
			}
		})
	}
	t.Run("javascript ref rejected", func(t *testing.T) {
		if _, err := Ref(base, "javascript:void(0)"); !errors.Is(err, ErrUnsupportedURL) {
			t.Fatalf("err = %v, want ErrUnsupportedURL", err)
		}
	})
}

func TestFingerprint(t *testing.T) {
	t.Run("same canonical url, same fingerprint", func(t *testing.T) {
		a, ca, err := URLFingerprint("http://Example.com:80/?b=1&a=2#x")
		if err != nil {
			t.Fatal(err)
		}
		b, cb, err := URLFingerprint("http://example.com/?a=2&b=1")
		if err != nil {
			t.Fatal(err)
		}
		if a != b || ca != cb {
			t.Fatalf("%s %q != %s %q", a, ca, b, cb)
		}
	})
	t.Run("method and body count", func(t *testing.T) {
		get := RequestFingerprint("GET", "http://example.com/", nil)
		post := RequestFingerprint("POST", "http://example.com/", nil)
		body := RequestFingerprint("POST", "http://example.com/", []byte("a=1"))
		if get == post || post == body {
			t.Fatal("method or body ignored")
		}
		if get != RequestFingerprint("get", "http://example.com/", nil) {
			t.Fatal("method case matters")
		}
	})
	t.Run("known sha1", func(t *testing.T) {
		// printf 'GEThttp://example.com/' | sha1sum
		want := "628735d3a16b67b1dd5fbfbd10a15f2c28362bbd"
		if got := RequestFingerprint("GET", "http://example.com/", nil).String(); got != want {
			t.Fatalf("fingerprint = %s, want %s", got, want)
		}
	})
	t.Run("hex round trip", func(t *testing.T) {
		f := RequestFingerprint("GET", "http://example.com/", nil)
		g, err := ParseFingerprint(f.String())
		if err != nil || g != f {
			t.Fatalf("ParseFingerprint(%s) = %s, %v", f, g, err)
		}
		for _, bad := range []string{"", "abc", f.String()[:39] + "z"} {
			if _, err := ParseFingerprint(bad); !errors.Is(err, ErrBadFingerprint) {
				t.Errorf("ParseFingerprint(%q) err = %v", bad, err)
			}
		}
	})
}
