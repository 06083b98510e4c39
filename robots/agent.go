package robots

import (
	"net/url"
	"strings"
)

// ProductToken returns the product token of a User-Agent header: its
// leading run of token characters, so "crawler/1.0 (+https://x/bot)" gives
// "crawler". RFC 9309 §2.2.1 matches robots.txt groups against this token,
// case-insensitively, and never against the whole header.
func ProductToken(userAgent string) string {
	userAgent = strings.TrimSpace(userAgent)
	for i := 0; i < len(userAgent); i++ {
		if !tokenChar(userAgent[i]) {
			return userAgent[:i]
		}
	}
	return userAgent
}

// tokenChar reports the characters of an HTTP token (RFC 9110 §5.6.2)
// except '!' and '&', as Google's parser (grobotstxt) takes them.
func tokenChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		strings.IndexByte("~#$%'*+-.^_`|", c) >= 0
}

// PathOf returns the part of a URL that robots.txt rules match: path,
// params and query, starting with "/", without the fragment. A URL with no
// path gives "/". Escapes are written in upper case, as in the patterns
// they are matched against (RFC 9309 §2.2.2).
func PathOf(u *url.URL) string {
	return string(upperEscapes([]byte(pathParamsQuery(u.String()))))
}

// pathParamsQuery cuts scheme, authority and fragment off a URL string, the
// way Google's parser does, so File matches what the reference matches.
func pathParamsQuery(uri string) string {
	start := 0
	if strings.HasPrefix(uri, "//") {
		start = 2
	}
	early := indexAnyFrom(uri, "/?;", start)
	protoEnd := indexFrom(uri, "://", start)
	if early != -1 && early < protoEnd {
		protoEnd = -1
	}
	if protoEnd == -1 {
		protoEnd = start
	} else {
		protoEnd += 3
	}
	pathStart := indexAnyFrom(uri, "/?;", protoEnd)
	if pathStart == -1 {
		return "/"
	}
	hash := indexFrom(uri, "#", start)
	if hash != -1 && hash < pathStart {
		return "/"
	}
	end := len(uri)
	if hash != -1 {
		end = hash
	}
	if uri[pathStart] != '/' {
		return "/" + uri[pathStart:end]
	}
	return uri[pathStart:end]
}

func indexAnyFrom(s, chars string, from int) int {
	if i := strings.IndexAny(s[from:], chars); i >= 0 {
		return i + from
	}
	return -1
}

func indexFrom(s, sub string, from int) int {
	if i := strings.Index(s[from:], sub); i >= 0 {
		return i + from
	}
	return -1
}
