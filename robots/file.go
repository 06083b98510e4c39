package robots

import (
	"context"
	"fmt"
	"net/url"
)

// File returns the robots.txt of rawURL's origin as the cluster shares it:
// the status it answered and the first MaxBodyBytes of its body, fetched
// once for the cluster as Check fetches it. A caller that wants the file
// itself (the Sitemap: lines) reads it here instead of fetching it again.
// ok is false when there is no copy to give: the file could not be had
// (unreachable, 5xx, 429), or another process is fetching it.
func (c *Cache) File(ctx context.Context, rawURL string) (status int, body []byte, ok bool, err error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return 0, nil, false, fmt.Errorf("robots file %q: %w", rawURL, ErrURL)
	}
	origin := Origin(u)
	e, err := c.entry(ctx, origin)
	if err != nil || e.blocked {
		return 0, nil, false, err
	}
	token := newToken()
	res, err := c.store.claim(ctx, origin, token, c.opts.FetchTimeout)
	switch {
	case err != nil:
		return 0, nil, false, err
	case res.fetch: // expired since: not ours to fetch for a reader
		return 0, nil, false, c.store.release(ctx, origin, token)
	case res.file == nil || blocked(res.file.status):
		return 0, nil, false, nil
	}
	return res.file.status, res.file.body, true, nil
}
