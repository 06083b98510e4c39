package proxy

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"testing"

	"github.com/crawler-dev/crawler/proxy/proxytest"
)

// TestPool_BanOneHost: real requests through the pool, where one proxy is
// refused (403) by host A only. Reported as such, it is banned for A and
// still used for B; every request to A ends up succeeding through the
// healthy proxy, each retry through a different proxy.
func TestPool_BanOneHost(t *testing.T) {
	rdb, keys := redisT(t)
	ctx := ctxT(t)
	siteA, siteB := newSite(t), newSite(t)
	start := starter(t)
	healthy := start(proxytest.NewHTTP())
	banA := start(proxytest.NewHostBan(mustURL(t, siteA.URL).Host))
	v := newValidator(t, rdb, keys, testOptions(writeSource(t, t.TempDir(), healthy.Line(), banA.Line())))
	if _, err := v.Round(ctx); err != nil {
		t.Fatal(err)
	}
	pool := newPool(t, rdb, keys, nil)

	get := func(target string) (via []ID) {
		u := mustURL(t, target)
		for range 2 {
			picked, err := pool.Pick(ctx, u, via)
			if err != nil {
				t.Fatalf("Pick %s excluding %v: %v", target, via, err)
			}
			via = append(via, picked.ID())
			status, latency, err := fetchVia(t, picked, target)
			if err != nil {
				t.Fatalf("fetch %s via %s: %v", target, picked.Proxy, err)
			}
			if err := pool.Report(ctx, picked, StatusOutcome(status, latency)); err != nil {
				t.Fatal(err)
			}
			if status == http.StatusOK {
				return via
			}
		}
		t.Fatalf("%s failed through %v", target, via)
		return nil
	}
	banned := mustParse(t, banA.Line()).ID()
	sawBan := false
	for i := range 30 {
		via := get(fmt.Sprintf("%s/a/%d", siteA.URL, i))
		if len(via) == 2 && via[0] == via[1] {
			t.Fatalf("a retry went through the same proxy %s", via[0])
		}
		if sawBan && via[0] == banned {
			t.Fatalf("request %d to host A picked the proxy it banned", i)
		}
		sawBan = sawBan || via[0] == banned
	}
	if !sawBan {
		t.Fatalf("30 requests to host A never went through the proxy it bans (odds 2^-30)")
	}
	usedForB := false
	for i := range 30 {
		via := get(fmt.Sprintf("%s/b/%d", siteB.URL, i))
		usedForB = usedForB || via[0] == banned
	}
	if siteA.hits.Load() != 30 || siteB.hits.Load() != 30 {
		t.Errorf("sites saw %d and %d hits, want 30 each", siteA.hits.Load(), siteB.hits.Load())
	}
	if !usedForB {
		t.Errorf("the proxy banned by host A was never used for host B in 30 requests")
	}
	if e := entryOfProxy(t, pool, mustParse(t, banA.Line())); e.State != StateUsable || e.Bans != 1 {
		t.Errorf("banned proxy = %+v, want usable with 1 ban", e)
	}
}

// TestValidator_SOCKS5Auth: a SOCKS5 proxy with credentials is usable
// through them; the same proxy without is not.
func TestValidator_SOCKS5Auth(t *testing.T) {
	rdb, keys := redisT(t)
	s := starter(t)(proxytest.NewSOCKS5("bob", "pw"))
	bare := "socks5://" + s.Addr()
	v := newValidator(t, rdb, keys, testOptions(writeSource(t, t.TempDir(), s.Line(), bare)))
	if _, err := v.Round(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	want := map[ID]bool{mustParse(t, s.Line()).ID(): true}
	if got := usableIDs(t, rdb, keys); !sameSet(got, want) {
		t.Errorf("usable = %v, want only the one with credentials %v", got, want)
	}
	if s.Requests() != 1 {
		t.Errorf("the SOCKS5 proxy connected %d times, want 1 (the request without credentials fails before)", s.Requests())
	}
}

// TestServer_CloseCutsTunnels: Close drops open CONNECT tunnels, as a
// killed proxy process would.
func TestServer_CloseCutsTunnels(t *testing.T) {
	site := newSite(t)
	p, err := proxytest.NewHTTP()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	host := mustURL(t, site.URL).Host
	fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", host, host)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	p.Close()
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", host)
	if resp, err := http.ReadResponse(br, nil); err == nil {
		t.Errorf("tunnel answered %d after Close, want it cut", resp.StatusCode)
	}
	if p.Requests() != 1 || p.Conns() != 1 {
		t.Errorf("proxy counted %d requests on %d connections, want 1 and 1", p.Requests(), p.Conns())
	}
}
