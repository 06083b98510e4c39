package robots

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"golang.org/x/sync/singleflight"
)

// ErrURL is returned by Check for a URL that is not an absolute http or
// https URL.
var ErrURL = errors.New("not an absolute http(s) URL")

// Decision is what robots.txt says about one URL.
type Decision struct {
	// Allowed is true when the URL may be fetched.
	Allowed bool
	// CrawlDelay is the Crawl-delay the site asks of this user agent
	// (capped at Options.MaxCrawlDelay), or 0.
	CrawlDelay time.Duration
	// Temporary is true when Allowed is false only because the robots.txt
	// could not be had yet: the server answered 5xx or 429, could not be
	// reached, or another process is still fetching it. Keep the URL and
	// ask again after RetryAfter; do not drop it as disallowed.
	Temporary bool
	// RetryAfter is when asking again may give another answer (Temporary).
	RetryAfter time.Duration
	// Unreachable is true, with Temporary, when the server gave no answer
	// at all (refused, reset, timed out, no such host): the site itself is
	// most likely down, so a page waiting for it should count the wait as
	// a failed try rather than wait out the error window.
	Unreachable bool
}

// Cache answers robots.txt questions for the whole cluster: each origin's
// file is fetched by one process, shared through Redis and parsed once per
// process. It is safe for concurrent use.
type Cache struct {
	opts   Options
	get    Getter
	store  store
	log    *zap.Logger
	files  *lru.Cache[string, *entry]
	flight singleflight.Group
	now    func() time.Time
}

// entry is one origin's robots.txt as this process knows it.
type entry struct {
	file      *File // nil: no rules (allow all) unless unavailable
	blocked   bool  // 5xx, 429, unreachable: disallow all until expires
	elsewhere bool  // blocked only while another process fetches the file
	expires   time.Time
	status    int
	fetchedAt time.Time
}

// New returns a Cache that fetches through get and shares files through
// rdb. A nil log logs nothing.
func New(rdb redis.UniversalClient, get Getter, opts Options, log *zap.Logger) (*Cache, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if rdb == nil || get == nil {
		return nil, errors.New("robots: New needs a Redis client and a Getter")
	}
	if log == nil {
		log = zap.NewNop()
	}
	files, err := lru.New[string, *entry](opts.MaxEntries)
	if err != nil {
		return nil, fmt.Errorf("robots: %w", err)
	}
	return &Cache{opts: opts, get: get, store: store{rdb: rdb, keys: opts.Keys},
		log: log.Named("robots"), files: files, now: time.Now}, nil
}

// Check reports whether the crawler with this User-Agent header may fetch
// rawURL, and the Crawl-delay its site asks for. Groups are matched on the
// header's product token (ProductToken). The answer comes from this
// process's cache, else from Redis, else from one fetch of the origin's
// robots.txt for the whole cluster. It returns an error only for a bad URL
// (ErrURL), an address the Getter refuses (ErrRefused), a Redis failure
// or ctx ending; any robots.txt body, status or network failure gives a
// Decision.
func (c *Cache) Check(ctx context.Context, rawURL, userAgent string) (Decision, error) {
	if err := ctx.Err(); err != nil {
		return Decision{}, err // a caller checking many links stops with its context
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Decision{}, fmt.Errorf("robots check %q: %w", rawURL, ErrURL)
	}
	origin := Origin(u)
	e, err := c.entry(ctx, origin)
	if err != nil {
		return Decision{}, err
	}
	return c.decide(e, ProductToken(userAgent), PathOf(u)), nil
}

func (c *Cache) decide(e *entry, token, path string) Decision {
	if e.blocked {
		return Decision{Temporary: true, RetryAfter: max(e.expires.Sub(c.now()), 0), Unreachable: e.status == 0 && !e.elsewhere}
	}
	if e.file == nil {
		return Decision{Allowed: true}
	}
	return Decision{Allowed: e.file.Allowed(token, path),
		CrawlDelay: min(e.file.CrawlDelay(token), c.opts.MaxCrawlDelay)}
}

// Origin returns scheme://host[:port] in lower case, without a default
// port: the unit one robots.txt governs (RFC 9309 §2.3).
func Origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	port := u.Port()
	if port == "" || (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		return scheme + "://" + host
	}
	return scheme + "://" + host + ":" + port
}
