// Package master is the crawl coordinator. For each job it owns (through a
// lease in Redis, so several masters share the jobs) it walks the job's list
// pages breadth-first, level by level: it takes a list page from the job's
// frontier under a lease, fetches it, extracts next_link and detail_link
// URLs, and commits the page in two atomic steps. First, one dupefilter
// script checks the detail URLs, and pushes each new one onto the queue of
// the slave the assigner routes it to, guarded so a page is admitted once
// per round even if a master dies and the page is fetched again. Second, the
// next list pages are appended to the frontier and the page leaves it.
//
// A job is finished when its frontier is empty, no list page is being
// fetched, and no detail task is queued or in flight on any slave. Jobs with
// recrawl_every start a new round on schedule; detail pages come back only
// once the dupefilter window has passed. Rounds are scheduled on the
// cluster's clock (Redis TIME, as leases and rates are), so a master's host
// clock being off does not start a round early or late.
//
// The master never talks to a slave: they meet in Redis (package queue and
// the cluster key names).
package master
