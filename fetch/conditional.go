package fetch

import (
	"net/http"
)

// Validators are what a site said identifies a version of a page: its
// ETag and Last-Modified headers, exactly as sent. A re-fetch sends them
// back (If-None-Match, If-Modified-Since) so that a page that did not
// change costs a 304 and no body.
type Validators struct {
	// ETag is the ETag header, quotes and W/ included; "" when none.
	ETag string `bson:"etag,omitempty" json:"etag,omitempty"`
	// LastModified is the Last-Modified header; "" when none.
	LastModified string `bson:"last_modified,omitempty" json:"last_modified,omitempty"`
}

// IsZero reports whether there is nothing to send.
func (v Validators) IsZero() bool { return v.ETag == "" && v.LastModified == "" }

// setConditional adds the conditional headers for v to h.
func setConditional(h http.Header, v Validators) {
	if v.ETag != "" {
		h.Set("If-None-Match", v.ETag)
	}
	if v.LastModified != "" {
		h.Set("If-Modified-Since", v.LastModified)
	}
}

// validatorsOf reads the validators of an answer.
func validatorsOf(h http.Header) Validators {
	return Validators{ETag: h.Get("ETag"), LastModified: h.Get("Last-Modified")}
}

// notModified is the Page of a 304 to a conditional request: no body; the
// validators the answer sent, or else those asked with (a 304 need not
// repeat them).
func notModified(req Request, resp *http.Response) *Page {
	v := validatorsOf(resp.Header)
	if v.ETag == "" {
		v.ETag = req.Validators.ETag
	}
	if v.LastModified == "" {
		v.LastModified = req.Validators.LastModified
	}
	return &Page{URL: resp.Request.URL.String(), Status: resp.StatusCode, NotModified: true, Validators: v}
}
