package proxy

import (
	"context"
	"time"
)

// Seeded is a proxy to put in the pool as if it had passed a check; for
// benchmarks and tests that need a pool without proxies to check.
type Seeded struct {
	Proxy   Proxy
	Latency time.Duration
	Tunnel  bool
}

// Seed admits proxies and records each as checked and usable, in two
// script calls per 500, with the validator's options (MaxSize,
// ProxyConcurrency, Recheck). No proxy is contacted. Like a round, it
// writes only under the validator lease: it takes it (ErrLeaseHeld if
// another validator holds it) and gives it back when done.
func (v *Validator) Seed(ctx context.Context, seeds []Seeded) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.lease(ctx); err != nil {
		return err
	}
	defer v.release()
	for i := 0; i < len(seeds); i += admitChunk {
		chunk := seeds[i:min(i+admitChunk, len(seeds))]
		ps := make([]Proxy, len(chunk))
		batch := make([]dueProxy, len(chunk))
		results := make([]CheckResult, len(chunk))
		verdicts := make([]string, len(chunk))
		for j, s := range chunk {
			ps[j] = s.Proxy
			batch[j] = dueProxy{id: s.Proxy.ID(), proxy: s.Proxy}
			results[j] = CheckResult{Proxy: s.Proxy, OK: true, Latency: s.Latency, Tunnel: s.Tunnel, Anonymity: Elite}
			verdicts[j] = verdictOK
		}
		if _, _, err := v.admit(ctx, ps); err != nil {
			return err
		}
		if _, err := v.record(ctx, batch, results, verdicts); err != nil {
			return err
		}
	}
	return nil
}
