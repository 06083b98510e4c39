package statuspage

import (
	"cmp"
	"slices"
	"strconv"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/statuspage/feed"
)

// slavesOf joins the live node table with the lease deadlines and each
// job's per-slave counts: every live slave, plus every slave ID that still
// holds queued or in-flight work without being live, sorted by ID.
func slavesOf(nodes []cluster.NodeInfo, loads map[int]feed.SlaveLoad, deadlines map[int]time.Time, lease time.Duration,
	now time.Time, jobs []Job) []Slave {
	byID := make(map[int]*Slave, len(nodes))
	for _, n := range nodes {
		s := &Slave{ID: n.ID, Live: true, Host: n.Host, PID: n.PID, Weight: n.Weight,
			Concurrency: n.Concurrency, Capacity: HeldPerFetcher * n.Concurrency, StartedAt: n.StartedAt}
		if l, ok := loads[n.ID]; ok {
			s.withLoad(l)
		}
		if d, ok := deadlines[n.ID]; ok {
			s.LastHeartbeat = d.Add(-lease)
			s.HeartbeatAgeMS = max(0, now.Sub(s.LastHeartbeat).Milliseconds())
		}
		byID[n.ID] = s
	}
	for _, j := range jobs {
		for key, c := range j.Slaves {
			id, err := strconv.Atoi(key)
			if err != nil {
				continue
			}
			s := byID[id]
			if s == nil {
				s = &Slave{ID: id}
				byID[id] = s
			}
			s.Queued += c.Queued
			s.InFlight += c.InFlight
			s.Stored += c.Stored
			s.Failed += c.Failed
		}
	}
	out := make([]Slave, 0, len(byID))
	for _, s := range byID {
		if s.Live || s.Queued > 0 || s.InFlight > 0 { // else a past slave's counters: nothing waits on it
			out = append(out, *s)
		}
	}
	slices.SortFunc(out, func(a, b Slave) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// withLoad takes what the slave published: its real capacity and what it
// holds, parks and fetches.
func (s *Slave) withLoad(l feed.SlaveLoad) {
	s.Published = true
	s.Capacity, s.MaxParked = l.Capacity, l.MaxParked
	s.Held, s.Parked, s.Fetching, s.Waiting = l.Held, l.Parked, l.Fetching, l.Waiting()
}
