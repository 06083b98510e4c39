package bench

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/crawler-dev/crawler/sink/s3test"
)

// Sink crawlers of the one-site benchmark: `crawler run` as CrawlerRun
// runs it (items to a JSON Lines file), with one --sink more. Their rows
// stand beside CrawlerRun's: what the sink costs the crawl.
const (
	CrawlerRunPostgres = "run-postgres" // PostgreSQL on SiteOptions.Postgres, a table per crawl
	CrawlerRunKafka    = "run-kafka"    // kfake in the benchmark's process
	CrawlerRunS3       = "run-s3"       // gofakes3 in the benchmark's process
	CrawlerRunWARC     = "run-warc"     // WARC files in the crawl's directory
)

// sinkSchemes names each sink crawler's sink, as its rows show it.
var sinkSchemes = map[string]string{CrawlerRunPostgres: "postgres://", CrawlerRunKafka: "kafka://",
	CrawlerRunS3: "s3://", CrawlerRunWARC: "warc:"}

// sinkCrawlers are the sink crawlers, in the order of their rows.
var sinkCrawlers = []string{CrawlerRunPostgres, CrawlerRunKafka, CrawlerRunS3, CrawlerRunWARC}

// GoalSinkVsFile is the least pages/s of `crawler run` with a sink over
// its pages/s with file output alone, in the same round (issue 33: a
// sink costs at most 10% of the crawl's throughput).
const GoalSinkVsFile = 0.9

// The in-process servers' names for the sinks' data.
const (
	benchTopic  = "items"
	benchBucket = "crawl"
)

// sinkServers are the servers the sink crawlers write to: started once
// for the benchmark, each crawl under a name of its own.
type sinkServers struct {
	kafka  *kfake.Cluster
	s3     *s3test.Server
	crawls int
}

// startSink starts the in-process server sink crawler c writes to, once.
func (e *siteEnv) startSink(c string) error {
	var err error
	switch {
	case c == CrawlerRunKafka && e.sinks.kafka == nil:
		e.sinks.kafka, err = kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, benchTopic, benchTopic+".failed"))
	case c == CrawlerRunS3 && e.sinks.s3 == nil:
		e.sinks.s3, err = s3test.Start(benchBucket)
	}
	if err != nil {
		return fmt.Errorf("start the %s sink's server: %w", sinkSchemes[c], err)
	}
	return nil
}

func (s *sinkServers) close() {
	if s.kafka != nil {
		s.kafka.Close()
	}
	if s.s3 != nil {
		s.s3.Close()
	}
}

// sinkURI is the --sink of one crawl of sink crawler c, in the crawl's
// directory dir, and what to drop after it (a PostgreSQL crawl's tables).
func (e *siteEnv) sinkURI(c, dir string) (uri string, drop func(context.Context) error) {
	e.sinks.crawls++
	none := func(context.Context) error { return nil }
	switch c {
	case CrawlerRunPostgres:
		table := fmt.Sprintf("bench_site_%d_%d", os.Getpid(), e.sinks.crawls)
		sep := "?"
		if strings.Contains(e.opts.Postgres, "?") {
			sep = "&"
		}
		return e.opts.Postgres + sep + "table=" + table, func(ctx context.Context) error { return dropTables(ctx, e.opts.Postgres, table) }
	case CrawlerRunKafka:
		return "kafka://" + e.sinks.kafka.ListenAddrs()[0] + "/" + benchTopic, none
	case CrawlerRunS3:
		return fmt.Sprintf("s3://bench:bench-secret@%s/site/%d?endpoint=%s", benchBucket, e.sinks.crawls, e.sinks.s3.Endpoint()), none
	}
	return "warc:" + filepath.Join(dir, "warc"), none
}

// hostOf is a URI's host and port, nothing of its credentials.
func hostOf(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return "?"
	}
	return u.Host
}

// dropTables drops a PostgreSQL crawl's tables.
func dropTables(ctx context.Context, uri, table string) error {
	conn, err := pgx.Connect(ctx, uri)
	if err != nil {
		return fmt.Errorf("drop the bench's table %s: %w", table, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP TABLE IF EXISTS "+table+", "+table+"_failed"); err != nil {
		return fmt.Errorf("drop the bench's table %s: %w", table, err)
	}
	return nil
}

// crawlRunSink crawls with `crawler run` and one sink, and checks the
// sink accepted every item the file holds.
func (e *siteEnv) crawlRunSink(ctx context.Context, c string, site *countingSite, dir string) (SiteRun, error) {
	uri, drop := e.sinkURI(c, dir)
	run, err := e.crawlRun(ctx, site, dir, "--sink", uri)
	if derr := drop(ctx); err == nil {
		err = derr
	}
	if err == nil && run.SinkAccepted < run.Stored {
		err = fmt.Errorf("the %s sink accepted %d records, fewer than the %d items stored", sinkSchemes[c], run.SinkAccepted, run.Stored)
	}
	return run, err
}

// fileRatios are a sink crawler's pages/s over `crawler run`'s with file
// output alone, round by round.
func (rep SiteReport) fileRatios(name string, l time.Duration) []float64 {
	return rep.ratios(name, CrawlerRun, l)
}

// sinkTable is each sink's pages/s beside file output's, at latency l;
// nil without sink crawlers.
func sinkTable(rep SiteReport, l time.Duration) *Table {
	t := &Table{
		Caption: fmt.Sprintf("Sinks on the one-site shape, %v latency: `crawler run -o items.jsonl` with one --sink more, "+
			"beside it alone, %d rounds, interleaved.", l, rep.Opts.Rounds),
		Header: []string{"output", "pages/s", "× file output", "crawler CPU/page", "peak RSS", "stored", "sink accepted"},
		Notes: []string{"× file output: each round's pages/s over `crawler run`'s with file output alone in the same round. " +
			"Servers: PostgreSQL at " + hostOf(rep.Opts.Postgres) + " (a table per crawl), kfake and gofakes3 (S3, in memory) in the benchmark's process, WARC files on the crawl's disk. " +
			"sink accepted: items and failures the sink took, from the run's summary."},
	}
	file := rep.runsOf(CrawlerRun, l)
	if len(file) > 0 {
		t.AddRow("file only", spanOf(file, "%.0f", SiteRun.PagesPerSecond), "1",
			spanOf(file, "%.2f ms", func(r SiteRun) float64 { return r.perPage(msOf(r.CrawlerCPU)) }),
			spanOf(file, "%.0f MiB", func(r SiteRun) float64 { return float64(r.PeakRSS) / (1 << 20) }),
			spanOf(file, "%.0f", func(r SiteRun) float64 { return float64(r.Stored) }), "-")
	}
	for _, name := range sinkCrawlers {
		runs := rep.runsOf(name, l)
		if len(runs) == 0 {
			continue
		}
		ratio := "-"
		if rs := rep.fileRatios(name, l); len(rs) > 0 {
			ratio = span("%.2f", slices.Min(rs), slices.Max(rs))
		}
		t.AddRow("file + "+sinkSchemes[name], spanOf(runs, "%.0f", SiteRun.PagesPerSecond), ratio,
			spanOf(runs, "%.2f ms", func(r SiteRun) float64 { return r.perPage(msOf(r.CrawlerCPU)) }),
			spanOf(runs, "%.0f MiB", func(r SiteRun) float64 { return float64(r.PeakRSS) / (1 << 20) }),
			spanOf(runs, "%.0f", func(r SiteRun) float64 { return float64(r.Stored) }),
			spanOf(runs, "%.0f", func(r SiteRun) float64 { return float64(r.SinkAccepted) }))
	}
	if len(t.Rows) <= 1 {
		return nil
	}
	return t
}

// addSinkGoals adds, per sink, the goal on its pages/s over file
// output's at latency l.
func (rep SiteReport) addSinkGoals(t *Table, l time.Duration) {
	for _, name := range sinkCrawlers {
		rs := rep.fileRatios(name, l)
		if len(rs) == 0 {
			continue
		}
		lo, hi := slices.Min(rs), slices.Max(rs)
		t.AddRow(fmt.Sprintf("`crawler run` with a %s sink, one site at %v: pages/s", sinkSchemes[name], l),
			fmt.Sprintf("≥ %.1f× file output's", GoalSinkVsFile), span("%.2f×", lo, hi), yesNo(lo >= GoalSinkVsFile))
	}
}
