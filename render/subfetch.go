package render

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	cdpfetch "github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/crawler-dev/crawler/fetch"
)

// fetchFor sends a paused request through the interceptor's send (the
// caller's Page.Fetch, or the renderer's own fetch) and hands its answer
// to the page; done, when not nil, gives back its place in the host's
// budget with the answer's status.
func (ic *interceptor) fetchFor(ev cdpfetch.EventRequestPaused, u *url.URL, done func(int)) {
	ans, err := ic.send(ic.tab, subRequest(ev, u, ic.page.Jar))
	if done != nil {
		done(ans.Status)
	}
	if err != nil {
		reason := network.ErrorReasonFailed
		if errors.Is(err, fetch.ErrBlockedAddress) {
			reason = network.ErrorReasonAddressUnreachable
		}
		ic.fail(ev.RequestID, reason)
		ic.navigationFailed(ev, ev.Request.URL, err)
		return
	}
	status := ans.Status
	if status < 100 {
		status = http.StatusOK
	}
	answer(ic.cdp, cdpfetch.FulfillRequest, cdpfetch.FulfillRequestParams{RequestID: ev.RequestID,
		ResponseCode: int64(status), ResponseHeaders: answerHeaders(ans), Body: ans.Body})
}

// droppedHeaders are the answer's headers the page does not get:
// those of one hop (the fetch path's connection, not the page's), those
// that describe the body as it was sent (it is handed to the page
// decompressed, and its length is its own), and the cookies the site sets
// (the job's cookie jar keeps them, with cookies: true, and the fetch path
// sends them; without it a site's cookies are dropped, as on every fetch).
var droppedHeaders = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Connection": true, "Proxy-Authenticate": true,
	"Proxy-Authorization": true, "Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
	"Content-Encoding": true, "Content-Length": true, "Set-Cookie": true, "Set-Cookie2": true,
}

// answerHeaders are the headers the page gets with ans: those the site
// sent (CORS's among them, so that a cross-origin fetch() reads its
// answer) but droppedHeaders and those the Connection header names, with
// ans.ContentType as Content-Type (the fetch path may have decoded the
// body to UTF-8).
func answerHeaders(ans Answer) []*cdpfetch.HeaderEntry {
	hop := map[string]bool{}
	for _, v := range ans.Header.Values("Connection") {
		for _, name := range strings.Split(v, ",") {
			hop[http.CanonicalHeaderKey(strings.TrimSpace(name))] = true
		}
	}
	var out []*cdpfetch.HeaderEntry
	for name, values := range ans.Header {
		canon := http.CanonicalHeaderKey(name)
		if droppedHeaders[canon] || hop[canon] || (canon == "Content-Type" && ans.ContentType != "") {
			continue
		}
		for _, v := range values {
			out = append(out, &cdpfetch.HeaderEntry{Name: canon, Value: v})
		}
	}
	if ans.ContentType != "" {
		out = append(out, &cdpfetch.HeaderEntry{Name: "Content-Type", Value: ans.ContentType})
	}
	return out
}

// ownHeaders are the request headers the fetch path sets itself.
var ownHeaders = map[string]bool{"user-agent": true, "accept-encoding": true, "cookie": true}

// subRequest is the paused request as Page.Fetch takes it. Its Cookie
// header keeps only the cookies the page's scripts set that jar does not
// hold already (the fetch path sends jar's itself).
func subRequest(ev cdpfetch.EventRequestPaused, u *url.URL, jar http.CookieJar) SubRequest {
	req := SubRequest{URL: ev.Request.URL, Method: ev.Request.Method, Headers: map[string]string{}}
	for name, v := range ev.Request.Headers {
		value := fmt.Sprint(v)
		if ownHeaders[strings.ToLower(name)] || fetch.ValidateHeaders(map[string]string{name: value}) != nil {
			continue
		}
		req.Headers[name] = value
	}
	if c := pageCookies(headerValue(ev.Request.Headers, "Cookie"), u, jar); c != "" {
		req.Headers["Cookie"] = c
	}
	for _, e := range ev.Request.PostDataEntries {
		req.Body = append(req.Body, e.Bytes...)
	}
	return req
}

// headerValue is the value of header name in h, whatever its case.
func headerValue(h network.Headers, name string) string {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return fmt.Sprint(v)
		}
	}
	return ""
}

// pageCookies is the browser's Cookie header without the cookies jar
// sends for u.
func pageCookies(header string, u *url.URL, jar http.CookieJar) string {
	if header == "" || jar == nil {
		return header
	}
	known := map[string]bool{}
	for _, c := range jar.Cookies(u) {
		known[c.Name] = true
	}
	var keep []string
	for _, part := range strings.Split(header, ";") {
		name, _, _ := strings.Cut(strings.TrimSpace(part), "=")
		if name != "" && !known[name] {
			keep = append(keep, strings.TrimSpace(part))
		}
	}
	return strings.Join(keep, "; ")
}

// loadCookies gives the tab the job's cookies for the page's URL, so that
// its scripts see them.
func loadCookies(tab context.Context, jar http.CookieJar, u *url.URL) error {
	if jar == nil {
		return nil
	}
	var params []*network.CookieParam
	for _, c := range jar.Cookies(u) {
		params = append(params, &network.CookieParam{Name: c.Name, Value: c.Value, URL: u.String()})
	}
	if len(params) == 0 {
		return nil
	}
	if _, err := chromedp.Call(tab, network.SetCookies, network.SetCookiesParams{Cookies: params}); err != nil {
		return fmt.Errorf("render: set the job's cookies: %w", err)
	}
	return nil
}

// keepCookies puts the cookies the tab holds for the page's URL (those its
// scripts set included) in the job's jar.
func keepCookies(tab context.Context, jar http.CookieJar, u *url.URL) {
	if jar == nil {
		return
	}
	ctx, cancel := context.WithTimeout(tab, 5*time.Second)
	defer cancel()
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{u.String()}})
	if err != nil {
		return
	}
	var kept []*http.Cookie
	for _, c := range res.Cookies {
		hc := &http.Cookie{Name: c.Name, Value: c.Value, Path: c.Path, Secure: c.Secure, HttpOnly: c.HTTPOnly}
		if !c.Session {
			hc.Expires = time.Unix(int64(c.Expires), 0)
		}
		kept = append(kept, hc)
	}
	if len(kept) > 0 {
		jar.SetCookies(u, kept)
	}
}
