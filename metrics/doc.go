// Package metrics is what the cluster's processes tell Prometheus: each
// master, slave and proxy validator started with `--metrics ADDR` serves
// /metrics (and /healthz) on ADDR, loopback by default (DefaultAddr).
// Only /healthz answers any Host header: /metrics and the profiles
// (WithProfiles) answer IP addresses, localhost, ADDR's host, this
// machine's name and WithAllowedHosts (--metrics-host), so a page whose
// name is rebound to ADDR cannot read them (internal/hostguard).
//
// Each process has one Registry, a Prometheus registry of its own rather
// than the global default one, so tests and `crawler run` (a master and
// several slaves in one process) never collide. The callers see a small
// typed API and no Prometheus: Registry.Node(role, slave) gives one node's
// recorders (Fetch, Dedup, Politeness, Robots, RedisHook, Retried, Failed),
// whose series carry the labels role (master, slave, proxy) and slave (the
// slave's ID; empty for other roles). Registry.Queues and
// Registry.Proxies are gauges read out at each scrape. A nil *Registry is
// metrics switched off: it returns nil recorders, and every method of a
// nil recorder records nothing, so callers never test for nil.
//
// # Metrics
//
// Counters (each label listed after role and slave, which all but the
// last metric carry):
//
//	crawler_fetch_pages_total{host,status}    pages fetched; status is the answer's class
//	                                          (1xx..5xx), or timeout/error when there was none
//	crawler_fetch_bytes_total{host}           body bytes of the pages fetched
//	crawler_retries_total                     fetches tried again after a transient failure
//	crawler_tasks_stolen_total                queued tasks a slave whose queue ran dry took from
//	                                          the job's longest other queue
//	crawler_failures_total{kind}              pages given up, by the caller's kind of failure
//	crawler_dedup_urls_total{job,result}      URLs checked by the dupefilter; result new|duplicate
//	crawler_recrawl_pages_total{job,result}   detail pages stored, by what the visit found; result
//	                                          new|changed|unchanged|not_modified
//	crawler_politeness_waits_total{host,reason} requests held back by a host's budget
//	                                          (rate, full, paused, or the caller's reason)
//	crawler_robots_disallowed_total{host}     URLs skipped because robots.txt disallows them
//	crawler_robots_fetches_total{status}      robots.txt downloads, by status class or timeout/error
//	crawler_redis_commands_total{command}     Redis commands sent, alone or pipelined
//	crawler_redis_errors_total{command}       Redis commands failed (a nil reply is no failure)
//	crawler_redis_dials_total{result}         connections opened to Redis; result ok|error
//	crawler_render_browser_restarts_total{reason} headless browsers replaced (no role or slave:
//	                                          one browser per process); reason died|hung|memory
//	crawler_sink_records_total{sink,result}   records sent to an item sink (--sink; no role or
//	                                          slave); result accepted|retried|refused
//
// Histograms:
//
//	crawler_fetch_duration_seconds{status}       request to last body byte, 10ms..60s
//	crawler_extract_duration_seconds{result}     one page's extraction, 1ms..10s; result
//	                                             ok, limit (past its work budget) or error
//	crawler_render_duration_seconds{result}      one page rendered in the headless browser,
//	                                             100ms..300s; result ok, timeout, browser
//	                                             (it died or did not start) or error
//	crawler_politeness_wait_seconds{reason}      the wait the budget asked for, 5ms..300s
//	crawler_redis_roundtrip_seconds{command}     one round trip, 100µs..1s; command is the
//	                                             name of a lone command, or "pipeline"
//
// Gauges:
//
//	crawler_fetch_in_flight                   pages being fetched now
//	crawler_queue_tasks{job,slave,state}      a slave's tasks for a job: queued or inflight
//	                                          (no role label: the master sets it for every slave)
//	crawler_job_state{job,state}              1 for the state a job the master runs is in
//	                                          (pending, running, paused, finished), else 0
//	crawler_proxies{state}                    proxies in the pool by state (no role or slave)
//	crawler_neardup_mirror_entries{job}       entries in a slave's copy of a job's near-duplicate
//	                                          index, replaced ones too until the next window
//	crawler_neardup_mirror_bytes{job}         that copy's estimated memory
//
// With Options.Runtime the Go and process collectors add go_* and
// process_* (process_cpu_seconds_total divided by
// crawler_fetch_pages_total is the CPU cost of a page).
//
// # Cardinality
//
// Every label is bounded, so a crawl of millions of URLs over thousands of
// hosts cannot grow the series without limit. There is never a URL label,
// and Redis commands are labelled by name only (evalsha, never a script's
// keys or arguments). Labels whose values come from outside are bounded per
// process, first come first kept: the first Options.Hosts hosts (32 by
// default) get a host label of their own and every later host is counted
// under host="other"; likewise the first Options.Jobs jobs (64), 32 failure
// kinds, 16 politeness reasons, 16 proxy states, 16 sinks and 64 Redis command names.
// The first hosts seen rather than the busiest: a series must not move
// between a host and "other" once it exists, or both counters would jump,
// and a job's allowed_domains are a handful of hosts, which come first.
// Histograms carry no host label (buckets times hosts is what blows up).
// Worst case per node: 33 hosts × 7 status classes for pages fetched.
package metrics
