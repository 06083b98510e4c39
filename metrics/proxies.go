package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Proxies is the proxy pool by state (new, usable, failing, dead,
// rejected), as the process that validates the pool last counted it; it is
// read out at each scrape. A nil *Proxies records nothing.
type Proxies struct {
	states *labelSet
	desc   *prometheus.Desc

	mu     sync.Mutex
	counts map[string]int // by state label; a state once seen stays, at 0
}

func newProxies() *Proxies {
	return &Proxies{
		states: newLabelSet(maxStates),
		desc:   prometheus.NewDesc("crawler_proxies", "Proxies in the pool, by state.", []string{labelState}, nil),
		counts: make(map[string]int),
	}
}

// SetStates records how many proxies the pool holds in each state. A state
// set before and missing now reads 0. Past 16 distinct states the rest are
// added up under "other".
func (p *Proxies) SetStates(counts map[string]int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for s := range p.counts {
		p.counts[s] = 0
	}
	for s, n := range counts {
		p.counts[p.states.label(s)] += n
	}
}

// Describe implements prometheus.Collector.
func (p *Proxies) Describe(ch chan<- *prometheus.Desc) { ch <- p.desc }

// Collect implements prometheus.Collector.
func (p *Proxies) Collect(ch chan<- prometheus.Metric) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for s, n := range p.counts {
		ch <- prometheus.MustNewConstMetric(p.desc, prometheus.GaugeValue, float64(n), s)
	}
}
