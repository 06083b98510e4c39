package fetch

import (
	"net/http"
	"strings"
)

// sniffLen is how much of a body http.DetectContentType looks at.
const sniffLen = 512

// htmlTypes are the media types the extractor can parse.
var htmlTypes = map[string]bool{"text/html": true, "application/xhtml+xml": true}

// unknownTypes say nothing about the body: it is sniffed instead, as
// browsers do.
var unknownTypes = map[string]bool{
	"": true, "application/octet-stream": true, "application/unknown": true, "unknown/unknown": true, "*/*": true,
}

// mediaType returns the lowercase type/subtype of a Content-Type value,
// without parameters. It tolerates malformed values.
func mediaType(contentType string) string {
	t, _, _ := strings.Cut(contentType, ";")
	return strings.ToLower(strings.TrimSpace(t))
}

// IsHTML reports whether a Content-Type value names HTML or XHTML.
func IsHTML(contentType string) bool {
	return htmlTypes[mediaType(contentType)]
}

// needsSniff reports whether a Content-Type header leaves the type to the
// body.
func needsSniff(header string) bool {
	return unknownTypes[mediaType(header)]
}

// contentType decides a body's type from its Content-Type header and, when
// the header is missing or says nothing (application/octet-stream), from
// the body's first bytes: the type a Page reports and whether it is HTML.
func contentType(header string, head []byte) (string, bool) {
	if !needsSniff(header) {
		return header, IsHTML(header)
	}
	sniffed := http.DetectContentType(head[:min(len(head), sniffLen)])
	return sniffed, IsHTML(sniffed)
}
