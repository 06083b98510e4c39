package proxy

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/proxy/proxytest"
)

// stallRound prepares a round that outlasts its lease: four stalling
// proxies checked one at a time, 500ms each, against a 1.5s lease. It
// returns the options and the stalling proxies.
func stallRound(t *testing.T) (Options, []*proxytest.Server) {
	t.Helper()
	start := starter(t)
	var lines []string
	var stalls []*proxytest.Server
	for range 4 {
		s := start(proxytest.NewStall())
		stalls, lines = append(stalls, s), append(lines, s.Line())
	}
	o := testOptions(writeSource(t, t.TempDir(), lines...))
	o.Concurrency, o.CheckTimeout, o.Lease = 1, 500*time.Millisecond, 1500*time.Millisecond
	return o, stalls
}

// roundAsync runs v.Round in the background.
func roundAsync(t *testing.T, v *Validator) <-chan roundResult {
	t.Helper()
	done := make(chan roundResult, 1)
	ctx := ctxT(t)
	go func() {
		r, err := v.Round(ctx)
		done <- roundResult{r, err}
	}()
	return done
}

type roundResult struct {
	r   RoundStats
	err error
}

// TestValidator_LeaseKeptMidRound: a round whose batch outlasts the lease
// (4 stalling checks of 500ms in a row against a 1.5s lease) keeps the
// lease throughout: a second validator trying all along never gets it,
// and the first records its results.
func TestValidator_LeaseKeptMidRound(t *testing.T) {
	rdb, keys := redisT(t)
	o, stalls := stallRound(t)
	a, b := newValidator(t, rdb, keys, o), newValidator(t, rdb, keys, o)
	done := roundAsync(t, a)
	var res roundResult
	for waiting := true; waiting; {
		select {
		case res = <-done:
			waiting = false
		case <-time.After(50 * time.Millisecond):
			if _, err := b.Round(ctxT(t)); !errors.Is(err, ErrLeaseHeld) {
				t.Fatalf("second validator's Round mid-round = %v, want ErrLeaseHeld", err)
			}
		}
	}
	if res.err != nil || res.r.Checked != 4 || res.r.Failed != 4 {
		t.Fatalf("first round = %+v, %v; want 4 checked, 4 failed", res.r, res.err)
	}
	pool := newPool(t, rdb, keys, nil)
	for _, s := range stalls {
		if e := entryOfProxy(t, pool, mustParse(t, s.Line())); e.Checks != 1 || e.Reason != "timeout" {
			t.Errorf("%s = %+v, want its check recorded (1 check, timeout)", s.Line(), e)
		}
	}
}

// TestValidator_LeaseLostFencesResults: a validator whose lease lapses
// mid-round (as if it were paused longer than the lease) and is taken by
// another does not write its results, and its Round says why.
func TestValidator_LeaseLostFencesResults(t *testing.T) {
	rdb, keys := redisT(t)
	o, stalls := stallRound(t)
	a, b := newValidator(t, rdb, keys, o), newValidator(t, rdb, keys, o)
	done := roundAsync(t, a)
	testenv.Eventually(t, 20*time.Second, "the first check under way", func() bool {
		n := int64(0)
		for _, s := range stalls {
			n += s.Requests()
		}
		return n > 0
	})
	if err := rdb.Del(ctxT(t), keys.Proxies().Lease()).Err(); err != nil { // the lease lapses
		t.Fatal(err)
	}
	if _, err := b.Round(ctxT(t)); err != nil {
		t.Fatalf("second validator's Round after the lease lapsed = %v, want the lease", err)
	}
	res := <-done
	if !errors.Is(res.err, ErrLeaseLost) || !strings.Contains(res.err.Error(), "lost its lease") {
		t.Fatalf("first round = %+v, %v; want ErrLeaseLost", res.r, res.err)
	}
	pool := newPool(t, rdb, keys, nil)
	for _, s := range stalls {
		if e := entryOfProxy(t, pool, mustParse(t, s.Line())); e.Checks != 0 || e.State != StateNew {
			t.Errorf("%s = %+v, want untouched by the validator that lost its lease", s.Line(), e)
		}
	}
	if l, err := pool.List(ctxT(t), false); err != nil || l.Validator != b.token {
		t.Errorf("status written by %q (%v), want only the lease holder %q", l.Validator, err, b.token)
	}
}

// TestValidator_RecordFenced: the script that records check results
// refuses a validator whose token no longer holds the lease.
func TestValidator_RecordFenced(t *testing.T) {
	rdb, keys := redisT(t)
	healthy := starter(t)(proxytest.NewHTTP())
	v := newValidator(t, rdb, keys, testOptions(writeSource(t, t.TempDir(), healthy.Line())))
	if _, err := v.Round(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	p := mustParse(t, healthy.Line())
	if err := rdb.Set(ctxT(t), keys.Proxies().Lease(), "another/1/validator", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	batch := []dueProxy{{id: p.ID(), proxy: p}}
	_, err := v.record(ctxT(t), batch, []CheckResult{{Proxy: p, Reason: "timeout"}}, []string{verdictFail})
	if !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("record without the lease = %v, want ErrLeaseLost", err)
	}
	if e := entryOfProxy(t, newPool(t, rdb, keys, nil), p); e.State != StateUsable || e.Checks != 1 {
		t.Errorf("proxy = %+v, want still usable after 1 check (the fenced write changed nothing)", e)
	}
}
