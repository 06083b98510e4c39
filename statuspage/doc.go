// Package statuspage is the master's status page (`crawler master --http
// 127.0.0.1:8090`): one HTML page with the jobs and their progress, live
// charts (pages per second, tasks per slave, error rate), the live slaves
// with the load they publish (statuspage/feed) and last heartbeat, each
// job's failures by kind with the last reasons, the busiest hosts with
// their politeness budget, and the proxy pool; and the JSON API behind it.
//
// The page is rendered on the server with html/template, so it is complete
// without JavaScript (it then reloads itself every few seconds). A small
// script, embedded like the stylesheet with go:embed, takes over when it
// can: it loads the last hour's samples the server keeps (/api/history,
// taken every 5s whether a page is open or not), polls /api/status, redraws
// the tables and draws the charts as inline SVG. No framework, no build step,
// no request leaves for another host, so the page works offline.
//
// With a write token of the master's API (package api, served under
// /api/v1/ beside the page when Options.API is set) the page acts: a
// second script, actions.js, keeps the token the operator enters in the
// tab's sessionStorage and sends it as an Authorization header (never a
// cookie, so no other site can make a browser act on the cluster), offers
// each job the actions its state allows (pause, resume, cancel,
// retry-failed), each confirmed in the page before it is sent, and a form
// that submits a job file. Without the token, or without JavaScript, the
// page only shows.
//
// Routes:
//
//	GET /                 the page
//	GET /api/status       a Snapshot as JSON: everything the page shows
//	GET /api/history      the samples of the last hour the charts start from
//	GET /api/jobs/{name}  one Job as JSON; 404 for a job never submitted
//	GET /static/...       the scripts and stylesheet
//	/api/v1/...           the master's API (Options.API), when set
//
// The package reads the cluster through a Source; RedisSource is the one
// the master uses, built on the cluster's own read paths (client.Client.Status,
// membership, proxy.Pool.List). Nothing it shows carries credentials: the
// proxies are listed in their redacted form, and the slaves' run tokens
// are left out.
package statuspage
