// Package layers holds the check that the crawler's packages import only
// downward (`make check` runs it; so does `go test ./...`). Its test lists
// every package of the module in one of these layers, lowest first:
//
//   - helpers: internal/* (redaction, Lua prelude, clocks, demo sites…),
//     which import no core package;
//   - the job file: jobspec, which imports nothing else of ours;
//   - shared types: cluster, which imports only the job file;
//   - components: the parts a crawl is built from (canon, dedup, queue,
//     fetch, downloader, store…);
//   - client: what submitters call;
//   - notifications: notify, the masters' webhooks, which report a
//     job's counters as client status does;
//   - roles: master, slave, the status page and the HTTP API, which never
//     import each other (they meet in Redis, or in the mains);
//   - test support: internal/testenv and the *test packages, which only
//     tests and the benchmarks import;
//   - the benchmark harness: cmd/crawler-bench/internal/…;
//   - mains: cmd/crawler and cmd/crawler-bench.
//
// A package's code imports packages of lower layers only, or of its own
// layer where that layer allows it; its tests may import anything but the
// benchmark harness and the mains. A package with no layer fails the
// check, so that a new package is placed on purpose.
package layers
