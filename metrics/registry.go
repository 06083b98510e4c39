package metrics

import (
	"net/http"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Registry holds one process's metrics: a Prometheus registry of its own
// (never the global default one), so that tests and `crawler run`, where a
// master and several slaves share a process, do not collide. A nil
// *Registry is metrics switched off: every method works and records
// nothing. It is safe for concurrent use.
type Registry struct {
	prom    *prometheus.Registry
	f       *families
	hosts   *labelSet
	jobs    *labelSet
	kinds   *labelSet
	reasons *labelSet
	command *labelSet
	queues  *Queues
	states  *JobStates
	proxies *Proxies
	sinks   *Sinks

	mu    sync.Mutex
	nodes map[nodeKey]*Node
}

// New returns an empty Registry.
func New(opts Options) (*Registry, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	r := &Registry{
		prom:    prometheus.NewRegistry(),
		f:       newFamilies(),
		hosts:   newLabelSet(opts.Hosts),
		jobs:    newLabelSet(opts.Jobs),
		kinds:   newLabelSet(maxKinds),
		reasons: newLabelSet(maxReasons),
		command: newLabelSet(maxCommands),
		nodes:   make(map[nodeKey]*Node),
	}
	r.queues = newQueues(r.jobs)
	r.states = newJobStates(r.jobs)
	r.proxies = newProxies()
	r.sinks = newSinks(r)
	r.prom.MustRegister(r.f.collectors()...)
	r.prom.MustRegister(r.queues, r.states, r.proxies)
	if opts.Runtime {
		r.prom.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	return r, nil
}

// Gatherer returns the Prometheus registry behind r, for tests and for
// mounting on another server; nil when r is nil.
func (r *Registry) Gatherer() prometheus.Gatherer {
	if r == nil {
		return nil
	}
	return r.prom
}

// Handler serves r's metrics in the Prometheus exposition formats, as
// /metrics does; on a nil Registry it answers 404.
func (r *Registry) Handler() http.Handler {
	if r == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(r.prom, promhttp.HandlerOpts{
		MaxRequestsInFlight: 4,
		ErrorHandling:       promhttp.ContinueOnError,
	})
}

// Role is the part a node plays in the cluster: the role label.
type Role string

// Roles of the nodes that record metrics.
const (
	RoleMaster Role = "master" // crawler master: list pages, dedup, routing
	RoleSlave  Role = "slave"  // crawler slave: detail pages
	RoleProxy  Role = "proxy"  // crawler proxy: the proxy pool's validator
)

type nodeKey struct {
	role  Role
	slave int
}

// Node returns the recorders of one node of this process, whose series
// carry role and slave labels. slave is the slave's ID for RoleSlave and
// ignored otherwise (the slave label is then empty). Asking twice for the
// same node gives the same *Node. On a nil Registry it returns nil, which
// records nothing.
func (r *Registry) Node(role Role, slave int) *Node {
	if r == nil {
		return nil
	}
	if role != RoleSlave {
		slave = -1
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	k := nodeKey{role, slave}
	if n, ok := r.nodes[k]; ok {
		return n
	}
	id := ""
	if slave >= 0 {
		id = strconv.Itoa(slave)
	}
	n := newNode(r, prometheus.Labels{labelRole: string(role), labelSlave: id})
	r.nodes[k] = n
	return n
}

// Queues returns the task-queue gauges, which the master sets; nil (a
// no-op) on a nil Registry.
func (r *Registry) Queues() *Queues {
	if r == nil {
		return nil
	}
	return r.queues
}

// JobStates returns the job-state gauges, which the master sets; nil (a
// no-op) on a nil Registry.
func (r *Registry) JobStates() *JobStates {
	if r == nil {
		return nil
	}
	return r.states
}

// Proxies returns the proxy pool gauges; nil (a no-op) on a nil Registry.
func (r *Registry) Proxies() *Proxies {
	if r == nil {
		return nil
	}
	return r.proxies
}
