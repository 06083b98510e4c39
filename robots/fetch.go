package robots

import (
	"context"
	"errors"
	"net/url"
)

// Response is what a Getter got for one URL.
type Response struct {
	// Status is the HTTP status code.
	Status int
	// Body is the response body; only a 2xx body is used, and only its
	// first MaxBodyBytes, so a Getter may stop reading there.
	Body []byte
	// Location is a 3xx response's Location header. A Getter that follows
	// redirects itself returns the final response and leaves it empty; one
	// that stops at its own limit returns a 3xx Status without Location,
	// which means no robots.txt (allow all), as past Options.MaxRedirects.
	Location string
}

// Getter fetches one URL with GET. The crawler passes its own fetcher, so
// robots.txt goes through the same address guard, proxies and user agent
// as the pages. It returns an error only when no HTTP response arrived
// (the server is unreachable); an HTTP error status is a Response.
//
// Redirect targets come from the site: a Getter must refuse private
// addresses itself as the page fetcher does, and wrap ErrRefused in the
// error it returns for them.
type Getter func(ctx context.Context, url string) (Response, error)

// ErrRefused marks a Getter's error for an address the crawler itself
// refuses to reach (a private network the job does not allow). It is not
// the site's answer: Check returns the error, wrapped, and stores nothing
// for the origin, so the caller fails the page with the cause at once
// and another job, allowed there, still fetches the file.
var ErrRefused = errors.New("not fetched")

// download fetches origin's robots.txt, following redirects, and returns
// the final status (0 when the server could not be reached) and body.
func (c *Cache) download(ctx context.Context, origin string) (int, []byte, error) {
	target := origin + "/robots.txt"
	for hop := 0; ; hop++ {
		resp, err := c.get(ctx, target)
		if err != nil {
			return 0, nil, err
		}
		if resp.Status < 300 || resp.Status > 399 || resp.Location == "" {
			return resp.Status, truncate(resp.Body), nil
		}
		next, ok := redirect(target, resp.Location)
		if !ok || hop == c.opts.MaxRedirects {
			// RFC 9309 §2.3.1.2: past the redirects it follows, a crawler
			// may take the file as unavailable.
			return resp.Status, nil, nil
		}
		target = next
	}
}

// redirect resolves a Location header against the URL that sent it; only
// http and https targets are followed.
func redirect(from, location string) (string, bool) {
	base, err := url.Parse(from)
	if err != nil {
		return "", false
	}
	next, err := base.Parse(location)
	if err != nil || (next.Scheme != "http" && next.Scheme != "https") || next.Host == "" {
		return "", false
	}
	next.Fragment = ""
	return next.String(), true
}
