package proxy

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/proxy/proxytest"
)

func TestChecker_JudgeUnreachable(t *testing.T) {
	for _, c := range []struct {
		target string
		judge  bool
		proxy  string
		want   bool
	}{
		{"http://127.0.0.1:8091/", true, "http://192.0.2.1:3128", true},
		{"http://127.0.0.1:8091/", true, "socks5://u:p@proxy.example.net:1080", true}, // names are not resolved
		{"http://localhost:8091/", true, "10.0.0.1:3128", true},
		{"http://[::1]:8091/", true, "https://203.0.113.9:443", true},
		{"http://0.0.0.0:8091/", true, "192.0.2.1:3128", true}, // a wildcard listener's own URL
		{"http://127.0.0.1:8091/", true, "127.0.0.1:3128", false},
		{"http://127.0.0.1:8091/", true, "127.8.9.10:3128", false},
		{"http://127.0.0.1:8091/", true, "[::1]:3128", false},
		{"http://127.0.0.1:8091/", true, "localhost:3128", false},
		{"http://203.0.113.7:8091/", true, "192.0.2.1:3128", false},  // a public judge
		{"http://judge.example.com/", true, "192.0.2.1:3128", false}, // a named judge: not judged
		{"http://127.0.0.1:8080/ok", false, "192.0.2.1:3128", false}, // --proxy-check-url: the operator's choice
	} {
		ch := &checker{target: mustURL(t, c.target), judge: c.judge}
		if got := ch.unreachable(mustParse(t, c.proxy)); got != c.want {
			t.Errorf("judge %s (judge %v), proxy %s: unreachable = %v, want %v", c.target, c.judge, c.proxy, got, c.want)
		}
	}
}

// TestValidator_JudgeUnreachable: with the judge on loopback (the
// default), candidates that are not on loopback cannot reach it. They are
// not checked and not buried: each round that meets them logs one error
// naming the flags to set, and the listing shows the reason on each.
// Proxies on loopback are checked as usual.
func TestValidator_JudgeUnreachable(t *testing.T) {
	rdb, keys := redisT(t)
	healthy := starter(t)(proxytest.NewHTTP())
	remote := []string{"http://192.0.2.1:3128", "socks5://bob:s3cret@proxy.example.net:1080"}
	core, logs := observer.New(zapcore.InfoLevel)
	o := testOptions(writeSource(t, t.TempDir(), append(remote, healthy.Line())...))
	o.MaxFailedRounds, o.BackoffBase, o.BackoffMax, o.Logger = 1, time.Millisecond, time.Millisecond, zap.New(core)
	v := newValidator(t, rdb, keys, o)

	rounds := 0
	testenv.Eventually(t, 20*time.Second, "3 rounds meeting the remote candidates", func() bool {
		r, err := v.Round(ctxT(t))
		if err != nil {
			t.Fatalf("Round: %v", err)
		}
		if r.Unreachable > 0 {
			rounds++
			if r.Unreachable != 2 || r.Breaker.Open {
				t.Fatalf("round = %+v, want 2 unreachable, breaker closed", r)
			}
		}
		return rounds == 3
	})
	errs := logs.FilterLevelExact(zapcore.ErrorLevel).All()
	if len(errs) != rounds {
		t.Errorf("%d error logs in %d rounds, want one a round", len(errs), rounds)
	}
	for _, e := range errs {
		line := fmt.Sprint(e.Message, e.ContextMap())
		if !strings.Contains(line, "--proxy-judge-url") || !strings.Contains(line, "--proxy-check-url") ||
			strings.Contains(line, "s3cret") {
			t.Errorf("error log %q: want both flags named and no credentials", line)
		}
	}

	l, err := newPool(t, rdb, keys, nil).List(ctxT(t), true)
	if err != nil {
		t.Fatal(err)
	}
	if l.Usable != 1 || l.Removed != 0 || l.Tracked != 3 {
		t.Errorf("listing: %d usable, %d tracked, %d removed; want 1, 3, 0", l.Usable, l.Tracked, l.Removed)
	}
	for _, line := range remote {
		e := entryOfProxy(t, newPool(t, rdb, keys, nil), mustParse(t, line))
		if e.State != StateNew || e.Checks != 0 || e.Reason != reasonJudgeUnreachable {
			t.Errorf("%s = %+v, want new, never checked, reason %q", e.Proxy, e, reasonJudgeUnreachable)
		}
	}
	if !strings.Contains(reasonJudgeUnreachable, "set --proxy-judge-url or --proxy-check-url") {
		t.Errorf("reason %q does not say which flags to set", reasonJudgeUnreachable)
	}
}
