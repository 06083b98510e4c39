package robots

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
)

const ua = "crawler/1.0 (+https://example.com/bot)"

// site is an httptest server whose /robots.txt answers what the test sets,
// counting requests.
type site struct {
	*httptest.Server
	hits   atomic.Int64
	mu     sync.Mutex
	status int
	body   string
	delay  time.Duration
}

func newSite(t *testing.T, status int, body string) *site {
	t.Helper()
	s := &site{status: status, body: body}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		s.hits.Add(1)
		s.mu.Lock()
		status, body, delay := s.status, s.body, s.delay
		s.mu.Unlock()
		time.Sleep(delay)
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *site) set(status int, body string) {
	s.mu.Lock()
	s.status, s.body = status, body
	s.mu.Unlock()
}

func newCache(t *testing.T, rdb redis.UniversalClient, keys cluster.Keys, tune func(*Options)) *Cache {
	t.Helper()
	opts := DefaultOptions()
	opts.Keys = keys
	if tune != nil {
		tune(&opts)
	}
	c, err := New(rdb, httpGetter(http.DefaultClient, ua), opts, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func check(t *testing.T, c *Cache, rawURL string) Decision {
	t.Helper()
	d, err := c.Check(context.Background(), rawURL, ua)
	if err != nil {
		t.Fatalf("Check(%s): %v", rawURL, err)
	}
	return d
}

func TestCache_Check(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	for _, tc := range []struct {
		name, body, path string
		status           int
		want             Decision
	}{
		{"disallowed", "User-agent: *\nDisallow: /private\n", "/private/1", 200, Decision{}},
		{"not disallowed", "User-agent: *\nDisallow: /private\n", "/public/1", 200, Decision{Allowed: true}},
		{"allow wins equal length", "User-agent: *\nDisallow: /page\nAllow: /page\n", "/page", 200, Decision{Allowed: true}},
		{"own group by product token", "User-agent: *\nDisallow: /\n\nUser-agent: CRAWLER\nDisallow: /x\n", "/y", 200, Decision{Allowed: true}},
		{"crawl-delay", "User-agent: *\nCrawl-delay: 2.5\n", "/a", 200, Decision{Allowed: true, CrawlDelay: 2500 * time.Millisecond}},
		{"crawl-delay capped", "User-agent: *\nCrawl-delay: 3600\n", "/a", 200, Decision{Allowed: true, CrawlDelay: time.Minute}},
		{"404 allows all", "User-agent: *\nDisallow: /\n", "/a", 404, Decision{Allowed: true}},
		{"403 allows all", "User-agent: *\nDisallow: /\n", "/a", 403, Decision{Allowed: true}},
		{"500 disallows for a while", "", "/a", 500, Decision{Temporary: true}},
		{"429 disallows for a while", "", "/a", 429, Decision{Temporary: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSite(t, tc.status, tc.body)
			c := newCache(t, rdb, keys, nil)
			got := check(t, c, s.URL+tc.path)
			if got.Temporary && got.RetryAfter <= 0 || got.RetryAfter > time.Minute {
				t.Errorf("RetryAfter = %v, want within (0, ErrorTTL]", got.RetryAfter)
			}
			got.RetryAfter = 0
			if got != tc.want {
				t.Errorf("Check = %+v, want %+v", got, tc.want)
			}
			if n := s.hits.Load(); n != 1 {
				t.Errorf("robots.txt fetched %d times, want 1", n)
			}
		})
	}
}

// servers are the Redis the cache must run on: the real one and miniredis
// (the embedded Redis of crawler run, which expires no key by itself).
func servers(t *testing.T) map[string]func() (redis.UniversalClient, cluster.Keys) {
	return map[string]func() (redis.UniversalClient, cluster.Keys){
		"redis": func() (redis.UniversalClient, cluster.Keys) { return testenv.Redis(t) },
		"miniredis": func() (redis.UniversalClient, cluster.Keys) {
			mr := miniredis.RunT(t)
			return redis.NewClient(&redis.Options{Addr: mr.Addr()}), cluster.Keys{}
		},
	}
}

func TestCache_ServerErrorRetriedLater(t *testing.T) {
	for name, connect := range servers(t) {
		t.Run(name, func(t *testing.T) { testServerErrorRetriedLater(t, connect) })
	}
}

func testServerErrorRetriedLater(t *testing.T, connect func() (redis.UniversalClient, cluster.Keys)) {
	rdb, keys := connect()
	s := newSite(t, 503, "")
	c := newCache(t, rdb, keys, func(o *Options) { o.ErrorTTL = 300 * time.Millisecond })
	if d := check(t, c, s.URL+"/a"); d.Allowed || !d.Temporary {
		t.Fatalf("after a 503: %+v, want a temporary disallow", d)
	}
	if d := check(t, c, s.URL+"/a"); d.Allowed || s.hits.Load() != 1 {
		t.Fatalf("within ErrorTTL: %+v after %d fetches, want the cached disallow and 1 fetch", d, s.hits.Load())
	}
	s.set(200, "User-agent: *\nDisallow: /private\n")
	testenv.Eventually(t, 10*time.Second, "allowed after the server recovered",
		func() bool { return check(t, c, s.URL+"/a").Allowed })
	if d := check(t, c, s.URL+"/private"); d.Allowed || d.Temporary {
		t.Errorf("after recovery /private: %+v, want disallowed for good", d)
	}
	if n := s.hits.Load(); n != 2 {
		t.Errorf("robots.txt fetched %d times, want 2 (the 503, then once after ErrorTTL)", n)
	}
}

// TestCache_ServerErrorOnAMovedClock: a 5xx robots.txt holds the origin
// back for ErrorTTL exactly, on the clock of the process (its cache) and
// of the server (the shared copy), both moved by the test, not waited for.
func TestCache_ServerErrorOnAMovedClock(t *testing.T) {
	rdb, keys, clock := testenv.MovedRedis(t)
	s := newSite(t, 503, "")
	c := newCache(t, rdb, keys, func(o *Options) { o.ErrorTTL = time.Minute })
	c.now = clock.Now
	if d := check(t, c, s.URL+"/a"); d.Allowed || !d.Temporary || d.RetryAfter != time.Minute {
		t.Fatalf("after a 503: %+v, want a temporary disallow for ErrorTTL (1m)", d)
	}
	s.set(200, "User-agent: *\nDisallow: /private\n")
	clock.Advance(time.Minute - time.Millisecond)
	if d := check(t, c, s.URL+"/a"); d.Allowed || d.RetryAfter != time.Millisecond || s.hits.Load() != 1 {
		t.Fatalf("a millisecond before ErrorTTL ends: %+v after %d fetches, want the cached disallow and 1 fetch", d, s.hits.Load())
	}
	clock.Advance(time.Millisecond)
	if d := check(t, c, s.URL+"/a"); !d.Allowed {
		t.Errorf("when ErrorTTL ends: %+v, want allowed (fetched again)", d)
	}
	if d := check(t, c, s.URL+"/private"); d.Allowed || d.Temporary {
		t.Errorf("after recovery /private: %+v, want disallowed for good", d)
	}
	if n := s.hits.Load(); n != 2 {
		t.Errorf("robots.txt fetched %d times, want 2 (the 503, then once when ErrorTTL ended)", n)
	}
}

func TestCache_Unreachable(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	s := httptest.NewServer(http.NotFoundHandler())
	dead := s.URL
	s.Close()
	c := newCache(t, rdb, keys, nil)
	d := check(t, c, dead+"/a")
	if d.Allowed || !d.Temporary || d.RetryAfter <= 0 {
		t.Errorf("unreachable server: %+v, want a temporary disallow with RetryAfter", d)
	}
}

func TestCache_Redirects(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	target := newSite(t, 200, "User-agent: *\nDisallow: /private\n")

	t.Run("followed across origins", func(t *testing.T) {
		var hits atomic.Int64
		from := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			switch r.URL.Path {
			case "/robots.txt":
				http.Redirect(w, r, "/moved", http.StatusMovedPermanently)
			case "/moved":
				http.Redirect(w, r, target.URL+"/robots.txt", http.StatusFound)
			}
		}))
		defer from.Close()
		c := newCache(t, rdb, keys, nil)
		if d := check(t, c, from.URL+"/private/1"); d.Allowed || d.Temporary {
			t.Errorf("/private after two redirects: %+v, want disallowed by the target's file", d)
		}
		if d := check(t, c, from.URL+"/public"); !d.Allowed {
			t.Errorf("/public after two redirects: %+v, want allowed", d)
		}
		if hits.Load() != 2 || target.hits.Load() != 1 {
			t.Errorf("requests: %d to the first origin, %d to the target; want 2 and 1", hits.Load(), target.hits.Load())
		}
	})
	t.Run("more than five is unavailable", func(t *testing.T) {
		var hits atomic.Int64
		loop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			http.Redirect(w, r, fmt.Sprintf("/robots.txt?hop=%d", hits.Load()), http.StatusFound)
		}))
		defer loop.Close()
		c := newCache(t, rdb, keys, nil)
		if d := check(t, c, loop.URL+"/a"); !d.Allowed {
			t.Errorf("endless redirects: %+v, want allowed (file unavailable)", d)
		}
		if n := hits.Load(); n != 6 {
			t.Errorf("%d requests, want 6 (the first and five redirects)", n)
		}
	})
}

// TestCache_SharedFetch: processes sharing one Redis fetch each robots.txt
// once between them.
func TestCache_SharedFetch(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	s := newSite(t, 200, "User-agent: *\nDisallow: /private\n")
	s.delay = 200 * time.Millisecond // everyone asks while the first fetch runs
	caches := []*Cache{newCache(t, rdb, keys, nil), newCache(t, rdb, keys, nil)}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := caches[i%2].Check(context.Background(), s.URL+"/private/x", ua)
			if err == nil && (d.Allowed || d.Temporary) {
				err = fmt.Errorf("decision %+v, want disallowed", d)
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	late := newCache(t, rdb, keys, nil) // a process started later reads Redis
	if d := check(t, late, s.URL+"/public"); !d.Allowed {
		t.Errorf("late cache: %+v, want allowed", d)
	}
	if n := s.hits.Load(); n != 1 {
		t.Errorf("robots.txt fetched %d times by three caches, want 1", n)
	}
}

// TestCache_DeadFetcher: a process that took the lease and died holds up
// the others only until the lease expires.
func TestCache_DeadFetcher(t *testing.T) {
	for name, connect := range servers(t) {
		t.Run(name, func(t *testing.T) { testDeadFetcher(t, connect) })
	}
}

func testDeadFetcher(t *testing.T, connect func() (redis.UniversalClient, cluster.Keys)) {
	rdb, keys := connect()
	s := newSite(t, 200, "User-agent: *\nDisallow: /private\n")
	origin := Origin(mustParse(t, s.URL))
	lease := 500 * time.Millisecond
	if _, err := (store{rdb: rdb, keys: keys}).claim(context.Background(), origin, "dead-process", lease); err != nil {
		t.Fatal(err)
	}
	c := newCache(t, rdb, keys, func(o *Options) { o.Wait = 50 * time.Millisecond })
	d := check(t, c, s.URL+"/a")
	if d.Allowed || !d.Temporary || d.RetryAfter <= 0 || d.RetryAfter > lease {
		t.Errorf("while another holds the lease: %+v, want temporary with RetryAfter in (0, %v]", d, lease)
	}
	if s.hits.Load() != 0 {
		t.Errorf("fetched while another process held the lease")
	}
	testenv.Eventually(t, 10*time.Second, "fetched after the dead process's lease expired",
		func() bool { return check(t, c, s.URL+"/a").Allowed })
	if n := s.hits.Load(); n != 1 {
		t.Errorf("fetched %d times, want 1", n)
	}
}

// TestCache_Miniredis runs the scripts on the embedded Redis of crawler run.
func TestCache_Miniredis(t *testing.T) {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	s := newSite(t, 200, "User-agent: *\nDisallow: /private\nCrawl-delay: 1\n")
	a, b := newCache(t, rdb, cluster.Keys{}, nil), newCache(t, rdb, cluster.Keys{}, nil)
	if d := check(t, a, s.URL+"/private"); d.Allowed || d.Temporary {
		t.Errorf("/private: %+v", d)
	}
	if d := check(t, b, s.URL+"/public"); !d.Allowed || d.CrawlDelay != time.Second {
		t.Errorf("/public: %+v, want allowed with a 1s delay", d)
	}
	if n := s.hits.Load(); n != 1 {
		t.Errorf("fetched %d times, want 1", n)
	}
}

func TestCache_BadInput(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	c := newCache(t, rdb, keys, nil)
	for _, u := range []string{"/relative", "ftp://h.test/x", "http://", "::"} {
		if _, err := c.Check(context.Background(), u, ua); !errors.Is(err, ErrURL) {
			t.Errorf("Check(%q) = %v, want ErrURL", u, err)
		}
	}
	bad := DefaultOptions()
	bad.ErrorTTL = 0
	var fe *cluster.FieldError
	if _, err := New(rdb, httpGetter(http.DefaultClient, ua), bad, nil); !errors.As(err, &fe) || fe.Field != "ErrorTTL" {
		t.Errorf("New with ErrorTTL 0 = %v, want a FieldError naming ErrorTTL", err)
	}
}

func TestOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"HTTP://Example.COM/a":       "http://example.com",
		"http://example.com:80/a":    "http://example.com",
		"https://example.com:443":    "https://example.com",
		"https://example.com:8443/x": "https://example.com:8443",
		"http://[::1]:8080/":         "http://[::1]:8080",
	} {
		if got := Origin(mustParse(t, in)); got != want {
			t.Errorf("Origin(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCache_Refused: an address the Getter refuses is the caller's error
// (ErrRefused), not an unreachable site, and nothing is stored for the
// origin: a job allowed there fetches the file at once.
func TestCache_Refused(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	s := newSite(t, 200, "User-agent: *\nDisallow: /private\n")
	refuse := func(context.Context, string) (Response, error) {
		return Response{}, fmt.Errorf("%w: dial: address not allowed", ErrRefused)
	}
	opts := DefaultOptions()
	opts.Keys = keys
	refusing, err := New(rdb, refuse, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := refusing.Check(context.Background(), s.URL+"/a", ua); !errors.Is(err, ErrRefused) {
		t.Errorf("a refused address: %+v, %v; want ErrRefused", d, err)
	}
	allowed := newCache(t, rdb, keys, nil)
	if d := check(t, allowed, s.URL+"/private/1"); d.Allowed || d.Temporary {
		t.Errorf("another job after the refusal: %+v, want the site's own rules", d)
	}
	if n := s.hits.Load(); n != 1 {
		t.Errorf("robots.txt fetched %d times, want 1", n)
	}
}
