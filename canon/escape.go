package canon

import "strings"

const upperHex = "0123456789ABCDEF"

// unreserved reports RFC 3986 unreserved characters, which are never
// percent-encoded in a canonical URL.
func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// pathChar reports characters that may stand unencoded in a path.
func pathChar(c byte) bool {
	return unreserved(c) || strings.IndexByte("!$&'()*+,;=:@/", c) >= 0
}

// queryChar reports characters that may stand unencoded in a query key or
// value; '&' and '=' are separators there and stay encoded.
func queryChar(c byte) bool {
	return unreserved(c) || strings.IndexByte("!$'()*+,;:@/?", c) >= 0
}

// normalizeEscapes decodes needlessly encoded unreserved characters,
// uppercases the hex of the remaining escapes, encodes every byte that may
// not stand unencoded (non-ASCII included) and encodes a stray '%'.
func normalizeEscapes(s string, allowed func(byte) bool) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			d := unhex(s[i+1])<<4 | unhex(s[i+2])
			if unreserved(d) {
				b.WriteByte(d)
			} else {
				writeEscape(&b, d)
			}
			i += 2
		case c != '%' && allowed(c):
			b.WriteByte(c)
		default:
			writeEscape(&b, c)
		}
	}
	return b.String()
}

func writeEscape(b *strings.Builder, c byte) {
	b.WriteByte('%')
	b.WriteByte(upperHex[c>>4])
	b.WriteByte(upperHex[c&15])
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	default:
		return c - 'a' + 10
	}
}

// removeDotSegments applies RFC 3986 section 5.2.4 to an absolute path.
func removeDotSegments(p string) string {
	if p == "" {
		return ""
	}
	segs := strings.Split(p, "/")
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 1 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	if len(out) == 0 || out[0] != "" {
		out = append([]string{""}, out...)
	}
	return strings.Join(out, "/")
}
