package canon

import "testing"

// FuzzCanonicalize checks the invariants of URL for any input: it does
// not panic; a canonical URL is its own canonical form; and the fingerprint
// of the canonical form is the fingerprint of the input.
func FuzzCanonicalize(f *testing.F) {
	for _, seed := range []string{
		"http://example.com", "HTTP://Example.COM:80/a/./b/../c?b=2&a=1#x",
		"https://例子.测试/新闻?q=新闻&a", "http://[2001:DB8::1]:8080/%7e%2f%zz?%",
		"http://user:pw@host/a%2Fb;p?x=1&&y", "https://a.example/..//./%2E%2e/q?k=v=w",
		"http://xn--bcher-kva.example/", "http://host:0080/", "http://h/?a=%26&a=%3d",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		once, err := URL(raw)
		if err != nil {
			if _, _, ferr := URLFingerprint(raw); ferr == nil {
				t.Fatalf("URL(%q) failed (%v) but URLFingerprint did not", raw, err)
			}
			return
		}
		twice, err := URL(once)
		if err != nil {
			t.Fatalf("URL(%q) = %q, which does not canonicalize again: %v", raw, once, err)
		}
		if twice != once {
			t.Fatalf("not idempotent: URL(%q) = %q, URL(%q) = %q", raw, once, once, twice)
		}
		fp, canon, err := URLFingerprint(raw)
		if err != nil || canon != once {
			t.Fatalf("URLFingerprint(%q) = %q, %v; URL gave %q", raw, canon, err, once)
		}
		if again, _, _ := URLFingerprint(once); again != fp {
			t.Fatalf("fingerprint of %q is %s, of its canonical form %q %s", raw, fp, once, again)
		}
		if fp != RequestFingerprint("GET", once, nil) {
			t.Fatalf("URLFingerprint(%q) is not the GET fingerprint of %q", raw, once)
		}
	})
}
