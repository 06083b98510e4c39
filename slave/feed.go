package slave

import (
	"cmp"
	"context"
	"net/url"
	"reflect"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/statuspage/feed"
	"github.com/crawler-dev/crawler/store"
)

// publishLoads publishes the slave's load for the status page until ctx
// ends: every third of its lease while it changes, and once a lease while
// it stays the same (an idle slave's), so an idle cluster costs Redis a
// SET a lease per slave; each publication lives for two leases.
func (s *Slave) publishLoads(ctx context.Context) {
	f := feed.New(s.deps.Redis, s.deps.Keys)
	t := time.NewTicker(s.opts.Lease / 3)
	defer t.Stop()
	var p loadPublication
	for {
		if l, now := s.load(), time.Now(); p.due(l, now, s.opts.Lease) {
			if err := f.PublishLoad(ctx, s.opts.ID, l, 2*s.opts.Lease); err != nil {
				if ctx.Err() == nil {
					s.log.Debug("publish load", zap.Error(err))
				}
			} else {
				p = loadPublication{load: l, at: now}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// loadPublication is the load last published, and when.
type loadPublication struct {
	load feed.SlaveLoad
	at   time.Time
}

// due reports whether l must be published at now: it is not the load last
// published (its time of taking aside), or that one is a lease old.
func (p loadPublication) due(l feed.SlaveLoad, now time.Time, lease time.Duration) bool {
	last := p.load
	last.At = l.At // every field but when it was taken, new ones included
	return !reflect.DeepEqual(l, last) || p.at.IsZero() || now.Sub(p.at) >= lease
}

// load is what the slave holds now.
func (s *Slave) load() feed.SlaveLoad {
	return feed.SlaveLoad{
		Capacity: s.capacity(), MaxParked: s.opts.MaxParked, Concurrency: s.opts.Concurrency,
		Held: s.pending(), Parked: min(s.dl.Parked(), s.opts.MaxParked, s.pending()), Fetching: s.dl.Fetching(),
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
