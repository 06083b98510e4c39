// Command crawler is the distributed crawler: one binary for the master, the
// slaves, the client and the all-in-one runner. See README.md.
//
// Each subcommand lives in a file of its own (master.go, slave.go,
// client.go, run.go, demo.go): flags, then options, then
// dependencies, then run. root.go resolves every flag from the command
// line, CRAWLER_<FLAG> or the --config file, in that order. The benchmarks
// are a binary of their own, cmd/crawler-bench.
package main

func main() { Execute() }
