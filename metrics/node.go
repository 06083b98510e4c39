package metrics

import "github.com/prometheus/client_golang/prometheus"

// Node is what one master, slave or validator of the process records. Get
// it from Registry.Node. A nil *Node records nothing, and so do the nil
// recorders its methods then return.
type Node struct {
	fetch      *Fetch
	dedup      *Dedup
	politeness *Politeness
	robots     *Robots
	nearDup    *NearDup
	redis      *RedisHook
	retries    prometheus.Counter
	stolen     prometheus.Counter
	extract    prometheus.ObserverVec
	failures   *bounded[prometheus.Counter]
	recrawl    *Recrawl
	render     prometheus.ObserverVec
}

func newNode(r *Registry, labels prometheus.Labels) *Node {
	f := r.f
	failures := f.failures.MustCurryWith(labels)
	return &Node{
		fetch:      newFetch(r, labels),
		dedup:      newDedup(r, labels),
		politeness: newPoliteness(r, labels),
		robots:     newRobots(r, labels),
		nearDup:    newNearDup(r, labels),
		redis:      newRedisHook(r, labels),
		recrawl:    newRecrawl(r, labels),
		retries:    f.retries.With(labels),
		stolen:     f.stolen.With(labels),
		extract:    f.extractDuration.MustCurryWith(labels),
		render:     f.renderDuration.MustCurryWith(labels),
		failures: newBounded(r.kinds, func(kind string) prometheus.Counter {
			return failures.WithLabelValues(kind)
		}),
	}
}

// Fetch returns the node's page-fetch recorder.
func (n *Node) Fetch() *Fetch {
	if n == nil {
		return nil
	}
	return n.fetch
}

// Dedup returns the node's dupefilter recorder.
func (n *Node) Dedup() *Dedup {
	if n == nil {
		return nil
	}
	return n.dedup
}

// Politeness returns the node's politeness-wait recorder.
func (n *Node) Politeness() *Politeness {
	if n == nil {
		return nil
	}
	return n.politeness
}

// Robots returns the node's robots.txt recorder.
func (n *Node) Robots() *Robots {
	if n == nil {
		return nil
	}
	return n.robots
}

// NearDup returns the node's near-duplicate mirror gauges.
func (n *Node) NearDup() *NearDup {
	if n == nil {
		return nil
	}
	return n.nearDup
}

// RedisHook returns a go-redis hook recording the node's Redis round trips:
// add it with rdb.AddHook. On a nil Node it is a hook that records nothing.
func (n *Node) RedisHook() *RedisHook {
	if n == nil {
		return nil
	}
	return n.redis
}

// Retried counts retries: fetches tried again after a transient failure
// (for a page fetched with retries, its tries minus one).
func (n *Node) Retried(retries int) {
	if n == nil || retries <= 0 {
		return
	}
	n.retries.Add(float64(retries))
}

// Stole counts tasks a slave whose queue ran dry took from another
// slave's queue.
func (n *Node) Stole(tasks int) {
	if n == nil || tasks <= 0 {
		return
	}
	n.stolen.Add(float64(tasks))
}

// Failed counts one page given up, under a kind the caller names from a
// small fixed set of its own (e.g. "http", "transport", "proxy",
// "extract", "store", "dead_letter"); past 32 distinct kinds the rest are
// counted as "other".
func (n *Node) Failed(kind string) {
	if n == nil {
		return
	}
	n.failures.get(kind).Inc()
}
