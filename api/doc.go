// Package api is the master's HTTP API: /api/v1/, served beside the status
// page on the master's --http address. It lets operators and their tools
// (a scheduler, CI, curl) submit, list, watch, cancel, retry and reset jobs
// and read their items without the crawler binary or a connection to
// Redis, through the same client.Client the `crawler client` commands use.
//
// Every call carries a bearer token from the token file (Tokens) whose
// role, read or write, decides what it may do; without a token file the API
// is read-only and answers loopback callers only. Failed attempts from one
// address are slowed (failureLimiter). Every error is a JSON object
// {"error": "..."}; openapi.json describes the whole contract and
// docs/api.md explains it.
package api
