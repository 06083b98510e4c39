package slave

import (
	"cmp"
	"context"
	"net/url"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/statuspage/feed"
	"github.com/crawler-dev/crawler/store"
)

// publishLoads publishes the slave's load for the status page every third
// of its lease until ctx ends; each publication lives for two leases.
func (s *Slave) publishLoads(ctx context.Context) {
	f := feed.New(s.deps.Redis, s.deps.Keys)
	t := time.NewTicker(s.opts.Lease / 3)
	defer t.Stop()
	for {
		if err := f.PublishLoad(ctx, s.opts.ID, s.load(), 2*s.opts.Lease); err != nil && ctx.Err() == nil {
			s.log.Debug("publish load", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// load is what the slave holds now.
func (s *Slave) load() feed.SlaveLoad {
	return feed.SlaveLoad{
		Capacity: s.capacity(), MaxParked: s.opts.MaxParked, Concurrency: s.opts.Concurrency,
		Held: s.dl.Pending(), Parked: min(s.dl.Parked(), s.opts.MaxParked), Fetching: s.dl.Fetching(),
		Hosts: s.heldHosts(), At: time.Now().UTC(),
	}
}

// heldHosts counts the held tasks by host, most first.
func (s *Slave) heldHosts() []feed.HostLoad {
	by := map[string]*feed.HostLoad{}
	for _, raws := range s.held.snapshot() {
		for _, raw := range raws {
			t, err := cluster.DecodeTask(raw)
			if err != nil {
				continue
			}
			u, err := url.Parse(t.URL)
			if err != nil || u.Host == "" {
				continue
			}
			h := by[u.Hostname()]
			if h == nil {
				h = &feed.HostLoad{Host: u.Hostname(), Origin: u.Scheme + "://" + u.Host}
				by[u.Hostname()] = h
			}
			h.Held++
		}
	}
	out := make([]feed.HostLoad, 0, len(by))
	for _, h := range by {
		out = append(out, *h)
	}
	slices.SortFunc(out, func(a, b feed.HostLoad) int {
		return cmp.Or(cmp.Compare(b.Held, a.Held), cmp.Compare(a.Host, b.Host))
	})
	return out[:min(len(out), feed.MaxHosts)]
}

// noteFailure publishes a failed page for the status page.
func (s *Slave) noteFailure(ctx context.Context, f store.Failure) {
	if err := feed.New(s.deps.Redis, s.deps.Keys).Failure(ctx, f); err != nil {
		s.log.Debug("publish failure", zap.Error(err))
	}
}
