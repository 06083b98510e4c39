package metrics

import "github.com/prometheus/client_golang/prometheus"

// Label names. role and slave say which node of the process recorded a
// series: several share one process in `crawler run`.
const (
	labelRole    = "role"
	labelSlave   = "slave"
	labelHost    = "host"
	labelStatus  = "status"
	labelKind    = "kind"
	labelJob     = "job"
	labelResult  = "result"
	labelReason  = "reason"
	labelState   = "state"
	labelCommand = "command"
	labelSink    = "sink"
)

// Buckets of the histograms, in seconds.
var (
	fetchBuckets   = []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}
	waitBuckets    = []float64{.005, .01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}
	renderBuckets  = []float64{.1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}
	extractBuckets = []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	redisBuckets   = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1}
)

// families are the metric vectors of one Registry (doc.go lists them).
type families struct {
	fetchPages       *prometheus.CounterVec
	fetchBytes       *prometheus.CounterVec
	fetchDuration    *prometheus.HistogramVec
	fetchInFlight    *prometheus.GaugeVec
	extractDuration  *prometheus.HistogramVec
	retries          *prometheus.CounterVec
	stolen           *prometheus.CounterVec
	failures         *prometheus.CounterVec
	dedupURLs        *prometheus.CounterVec
	politenessWaits  *prometheus.CounterVec
	politenessWaited *prometheus.HistogramVec
	robotsDisallowed *prometheus.CounterVec
	robotsFetches    *prometheus.CounterVec
	redisCommands    *prometheus.CounterVec
	redisErrors      *prometheus.CounterVec
	redisRoundTrip   *prometheus.HistogramVec
	redisDials       *prometheus.CounterVec
	nearEntries      *prometheus.GaugeVec
	nearBytes        *prometheus.GaugeVec
	recrawlPages     *prometheus.CounterVec
	renderDuration   *prometheus.HistogramVec
	browserRestarts  *prometheus.CounterVec
	sinkRecords      *prometheus.CounterVec
}

func newFamilies() *families {
	node := func(more ...string) []string { return append([]string{labelRole, labelSlave}, more...) }
	return &families{
		fetchPages: counter("crawler_fetch_pages_total",
			"Pages fetched, by the status class of the answer (1xx..5xx) or timeout/error when there was none.", node(labelHost, labelStatus)),
		fetchBytes: counter("crawler_fetch_bytes_total",
			"Body bytes of the pages fetched.", node(labelHost)),
		fetchDuration: histogram("crawler_fetch_duration_seconds",
			"Time to fetch a page, from the request to the last body byte.", fetchBuckets, node(labelStatus)),
		fetchInFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "crawler_fetch_in_flight",
			Help: "Pages being fetched now."}, node()),
		extractDuration: histogram("crawler_extract_duration_seconds",
			"Time to extract one page's links and fields, by result: ok, limit (past the page's work budget) or error.",
			extractBuckets, node(labelResult)),
		retries: counter("crawler_retries_total",
			"Fetches tried again after a transient failure.", node()),
		stolen: counter("crawler_tasks_stolen_total",
			"Queued tasks a slave whose queue ran dry took from the longest other queue of the job.", node()),
		failures: counter("crawler_failures_total",
			"Pages given up, by kind of failure.", node(labelKind)),
		dedupURLs: counter("crawler_dedup_urls_total",
			"URLs checked by the dupefilter, by result (new or duplicate).", node(labelJob, labelResult)),
		politenessWaits: counter("crawler_politeness_waits_total",
			"Requests held back by a host's politeness budget, by reason.", node(labelHost, labelReason)),
		politenessWaited: histogram("crawler_politeness_wait_seconds",
			"How long the politeness budget said to wait before asking again.", waitBuckets, node(labelReason)),
		robotsDisallowed: counter("crawler_robots_disallowed_total",
			"URLs not fetched because the host's robots.txt disallows them.", node(labelHost)),
		robotsFetches: counter("crawler_robots_fetches_total",
			"robots.txt files downloaded, by status class or timeout/error.", node(labelStatus)),
		redisCommands: counter("crawler_redis_commands_total",
			"Redis commands sent, alone or in a pipeline, by command name.", node(labelCommand)),
		redisErrors: counter("crawler_redis_errors_total",
			"Redis commands that failed (a nil reply is not a failure), by command name.", node(labelCommand)),
		redisRoundTrip: histogram("crawler_redis_roundtrip_seconds",
			"Redis round trips, by command name, or \"pipeline\" for a pipeline or transaction.", redisBuckets, node(labelCommand)),
		redisDials: counter("crawler_redis_dials_total",
			"Connections opened to Redis, by result (ok or error).", node(labelResult)),
		nearEntries: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "crawler_neardup_mirror_entries",
			Help: "Entries in a slave's copy of a job's near-duplicate index (replaced ones too, until the next window)."},
			node(labelJob)),
		nearBytes: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "crawler_neardup_mirror_bytes",
			Help: "Estimated memory of a slave's copy of a job's near-duplicate index."}, node(labelJob)),
		recrawlPages: counter("crawler_recrawl_pages_total",
			"Detail pages stored, by what the visit found: new, changed, unchanged or not_modified (a 304).",
			node(labelJob, labelResult)),
		renderDuration: histogram("crawler_render_duration_seconds",
			"Time to render a page in the headless browser, by result: ok, timeout, browser (it died) or error; its count is the pages rendered.",
			renderBuckets, node(labelResult)),
		browserRestarts: counter("crawler_render_browser_restarts_total",
			"Headless browsers the process replaced, by reason: died (crashed or killed), hung (stopped answering) or memory (past --render-max-memory).",
			[]string{labelReason}),
		sinkRecords: counter("crawler_sink_records_total",
			"Items and failures sent to an item sink (--sink), by sink and result: accepted, retried (a try failed; sent again) or refused (never to be taken).",
			[]string{labelSink, labelResult}),
	}
}

func counter(name, help string, labels []string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

func histogram(name, help string, buckets []float64, labels []string) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
}

// collectors lists the vectors for registration.
func (f *families) collectors() []prometheus.Collector {
	return []prometheus.Collector{f.fetchPages, f.fetchBytes, f.fetchDuration, f.fetchInFlight, f.extractDuration, f.retries,
		f.stolen, f.failures, f.dedupURLs, f.politenessWaits, f.politenessWaited, f.robotsDisallowed, f.robotsFetches, f.recrawlPages,
		f.redisCommands, f.redisErrors, f.redisRoundTrip, f.redisDials, f.nearEntries, f.nearBytes, f.renderDuration,
		f.browserRestarts, f.sinkRecords}
}
