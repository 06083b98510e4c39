package downloader

import (
	"context"
	"fmt"
	"net/url"

	"github.com/crawler-dev/crawler/fetch"
)

// sharedRobots answers a request for an origin's robots.txt itself (the
// master reads its Sitemap: lines) from the copy the job's robots.txt
// cache shares, which step 3 has just loaded to allow the request: the
// file is fetched once for the cluster, not once more as a page. It
// returns false when the request is not for such a file, or the cache
// has no copy to give; the request is then sent as any other.
func (d *Downloader) sharedRobots(ctx context.Context, r *Request, u *url.URL) (Result, bool) {
	if r.Job.robots == nil || !r.AllowNonHTML || r.at != r.URL || u.Path != "/robots.txt" || u.RawQuery != "" {
		return Result{}, false
	}
	status, body, ok, err := r.Job.robots.File(ctx, r.URL)
	if err != nil || !ok {
		return Result{}, false
	}
	if status < 200 || status > 299 {
		return Result{Kind: Failed, Status: status,
			Err: &fetch.Error{URL: r.URL, Status: status, Err: fmt.Errorf("http status %d", status)}}, true
	}
	page := &fetch.Page{URL: r.URL, Status: status, ContentType: "text/plain", Body: body}
	return Result{Kind: Fetched, Status: status, Page: page}, true
}
