package client

import (
	"context"
	"fmt"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/proxy"
)

// proxyWarnings say why a job that requires proxies waits: the pool holds
// no usable proxy. Nothing when the job is finished, does not require
// proxies, or the pool cannot be read.
func (c *Client) proxyWarnings(ctx context.Context, spec *jobspec.Job, st *Status) []string {
	if st.State == cluster.StateFinished || spec.Proxy != jobspec.ProxyRequire {
		return nil
	}
	pool, err := proxy.NewPool(c.rdb, c.keys, proxy.DefaultPoolOptions())
	if err != nil {
		return nil
	}
	l, err := pool.List(ctx, true)
	if err != nil || l.Usable > 0 {
		return nil
	}
	why := "no proxy source has been read (start a master or crawler proxy with --proxy-source)"
	if l.Tracked+l.Removed > 0 {
		why = fmt.Sprintf("%d proxies known, none usable", l.Tracked+l.Removed)
		for _, e := range l.Proxies {
			if e.Reason != "" {
				why += fmt.Sprintf(" (%s: %s)", e.Proxy, e.Reason)
				break
			}
		}
	}
	return []string{"proxy: require, but the pool has no usable proxy: " + why + "; see crawler client proxies"}
}
