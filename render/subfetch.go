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

// fetchFor sends a paused request through Page.Fetch and hands its answer
// to the page; done, when not nil, gives back its place in the host's
// budget with the answer's status.
func (ic *interceptor) fetchFor(ev cdpfetch.EventRequestPaused, u *url.URL, done func(int)) {
	ans, err := ic.page.Fetch(ic.tab, subRequest(ev, u, ic.page.Jar))
	if done != nil {
		done(ans.Status)
	}
	if err != nil {
		reason := network.ErrorReasonFailed
		if errors.Is(err, fetch.ErrBlockedAddress) {
			reason = network.ErrorReasonAddressUnreachable
		}
		ic.fail(ev.RequestID, reason)
		return
	}
	status := ans.Status
	if status < 100 {
		status = http.StatusOK
	}
	var headers []*cdpfetch.HeaderEntry
	if ans.ContentType != "" {
		headers = append(headers, &cdpfetch.HeaderEntry{Name: "Content-Type", Value: ans.ContentType})
	}
	_, _ = chromedp.Call(ic.cdp, cdpfetch.FulfillRequest, cdpfetch.FulfillRequestParams{RequestID: ev.RequestID,
		ResponseCode: int64(status), ResponseHeaders: headers, Body: ans.Body})
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
