package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/internal/demosite"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/sink/s3test"
	"github.com/crawler-dev/crawler/store"
)

// sinkRows reads the PostgreSQL sink's table: how many rows each URL has.
func sinkRows(t *testing.T, pool *pgxpool.Pool, table string) map[string]int {
	t.Helper()
	rows, err := pool.Query(context.Background(), "SELECT url, count(*) FROM "+table+" GROUP BY url")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var url string
		var n int
		if err := rows.Scan(&url, &n); err != nil {
			t.Fatal(err)
		}
		out[url] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// countSinkRows counts the rows of a sink table, -1 while it is missing.
func countSinkRows(t *testing.T, pool *pgxpool.Pool, table string) int {
	t.Helper()
	n := -1
	_ = pool.QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n)
	return n
}

// checkSinkRows checks that the sink's table holds each stored item's page
// once, and nothing else.
func checkSinkRows(t *testing.T, pool *pgxpool.Pool, table string, items []store.Item) {
	t.Helper()
	rows := sinkRows(t, pool, table)
	for _, it := range items {
		if rows[it.URL] != 1 {
			t.Errorf("%s: %d rows in %s, want 1", it.URL, rows[it.URL], table)
		}
	}
	if len(rows) != len(countURLs(items)) {
		t.Errorf("%s holds %d pages, the store %d", table, len(rows), len(countURLs(items)))
	}
}

// TestRun_SinkPostgres: `crawler run --sink postgres://…` whose PostgreSQL
// goes away mid-crawl (every connection closed, new ones refused) holds
// the crawl until it is back, then stores every page in the table once,
// and the summary says what the sink took.
func TestRun_SinkPostgres(t *testing.T) {
	t.Parallel()
	pool, table := testenv.Postgres(t)
	site, base := serveSite(t, faultSite)
	jobFile := writeJob(t, "pgsink", base)
	out := filepath.Join(t.TempDir(), "items.jsonl")
	pg := newPartition(t, "postgres", testenv.PostgresURI())
	sinkURI := pg.url(testenv.PostgresURI()) + "&table=" + table

	run := start(t, "run", "run", "--job", jobFile, "-o", out, "--concurrency", "8", "--sink", sinkURI)
	testenv.Eventually(t, 2*time.Minute, "the first rows in the table", func() bool { return countSinkRows(t, pool, table) > 0 })
	pg.down()
	waitHeld(t, run)
	pg.up(t)
	<-run.done
	if code := run.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("crawler run exited %d:\n%s", code, tail(run.out.String(), 4000))
	}
	items, _ := itemLines(t, out)
	for path, outcome := range site.Expected() {
		if n := countURLs(items)[base+path]; outcome == demosite.Stored && n != 1 {
			t.Errorf("%s is in the file %d times, want once", base+path, n)
		}
	}
	checkSinkRows(t, pool, table, items)
	failed := countSinkRows(t, pool, table+"_failed")
	if want := len(failureURLs(t, store.FailuresPath(out))); failed != want || failed == 0 {
		t.Errorf("%d failures in %s_failed, %d in the failures file", failed, table, want)
	}
	summary := regexp.MustCompile(`sink (\S+): accepted (\d+), retried (\d+), refused 0`).FindStringSubmatch(run.out.String())
	if summary == nil || summary[1] != sinkURI || atoi(summary[2]) < len(items)+failed || atoi(summary[3]) == 0 {
		t.Errorf("summary line %q; want the sink %s, at least %d accepted, some retried:\n%s",
			summary, sinkURI, len(items)+failed, tail(run.out.String(), 2000))
	}
}

// waitHeld waits for the run to say it holds its items for a sink that
// is down, and fails if it ended instead.
func waitHeld(t *testing.T, run *proc) {
	t.Helper()
	testenv.Eventually(t, 2*time.Minute, "the run to hold its items for the sink", func() bool {
		return strings.Contains(run.out.String(), "sink did not take records")
	})
	select {
	case <-run.done:
		t.Fatalf("the run ended with its sink down:\n%s", tail(run.out.String(), 3000))
	default:
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// TestCluster_SinkKillSlave: a slave killed with SIGKILL in the middle of
// its batches, restarted, leaves every page in the PostgreSQL sink once:
// its unacknowledged tasks are delivered again and upserted.
func TestCluster_SinkKillSlave(t *testing.T) {
	t.Parallel()
	env := newClusterEnv(t)
	pool, table := testenv.Postgres(t)
	env.slaveArgs = []string{"--sink", testenv.PostgresSink(table)}
	site, base := serveSite(t, faultSite)
	const job = "pgkill"
	jobFile := writeJob(t, job, base)

	env.startMaster(t, "master")
	victim := env.startSlave(t, 0)
	env.startSlave(t, 1)
	env.waitSlaves(t, 0, 1)
	env.submit(t, job, jobFile)
	env.waitProgress(t, job, "300 pages stored", func(c client.Counters) bool { return c.Stored >= 300 })
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-victim.done
	env.waitSlaves(t, 1)
	env.startSlave(t, 0)
	final := env.wait(t, job, 3*time.Minute)
	items := env.results(t, job)
	checkFileCrawl(t, site, base, final, items, env.failedURLs(t, job))
	checkSinkRows(t, pool, table, items)
	// The slaves add their sinks' counts to the job's status every second
	// and when they stop; the killed slave's last second is lost.
	testenv.Eventually(t, time.Minute, "the sink's counts in client status --json", func() bool {
		st := env.wait(t, job, time.Minute)
		return len(st.Sinks) == 1 && st.Sinks["postgres"].Accepted > 0 && st.Sinks["postgres"].Refused == 0
	})
}

// TestRun_SinkWARC: `crawler run --sink warc:DIR` archives each stored
// page as a response and a request record that warcio.js reads, with the
// page as the site sent it and its digest right.
func TestRun_SinkWARC(t *testing.T) {
	t.Parallel()
	_, base := serveSite(t, demosite.Options{Details: 120})
	jobFile := writeJob(t, "warcsink", base)
	out := filepath.Join(t.TempDir(), "items.jsonl")
	dir := filepath.Join(t.TempDir(), "warc")
	stdout, stderr, err := crawler(t, 3*time.Minute, "run", "--job", jobFile, "-o", out, "--sink", "warc:"+dir+"?max_size=64KiB", "-q")
	if err != nil {
		t.Fatalf("crawler run: %v\n%s\n%s", err, stdout, tail(stderr, 3000))
	}
	items, _ := itemLines(t, out)
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if open, _ := filepath.Glob(filepath.Join(dir, "*.open")); len(open) > 0 || len(files) < 2 {
		t.Fatalf("files %v, left open %v; want several complete files (max_size 64KiB)", files, open)
	}
	responses := map[string]testenv.WARCRecord{}
	requests := map[string]bool{}
	for _, r := range testenv.ReadWARC(t, files...) {
		switch r.Type {
		case "response":
			responses[r.URI] = r
		case "request":
			requests[r.ConcurrentTo] = true
		}
	}
	for _, it := range items {
		r, ok := responses[it.URL]
		if !ok {
			r, ok = responses[it.FinalURL]
		}
		if !ok || r.Status != 200 || r.PayloadDigest != r.ComputedDigest || !strings.Contains(r.Payload, "<h1>") || !requests[r.ID] {
			t.Errorf("%s: response %+v (request: %v); want the page with its digest and its request", it.URL, r.ID, requests[r.ID])
		}
	}
	if len(responses) != len(items) {
		t.Errorf("%d pages archived, %d items", len(responses), len(items))
	}
}

// TestRun_SinkKafka: `crawler run --sink kafka://…/items` produces each
// stored page's item, key its fingerprint, header version 1 (a first
// round), and its failures to items.failed.
func TestRun_SinkKafka(t *testing.T) {
	t.Parallel()
	kafka, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "items", "items.failed"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kafka.Close)
	broker := kafka.ListenAddrs()[0]
	site, base := serveSite(t, demosite.Options{Details: 120})
	jobFile := writeJob(t, "kafkasink", base)
	out := filepath.Join(t.TempDir(), "items.jsonl")
	stdout, stderr, err := crawler(t, 3*time.Minute, "run", "--job", jobFile, "-o", out, "--sink", "kafka://"+broker+"/items", "-q")
	if err != nil {
		t.Fatalf("crawler run: %v\n%s\n%s", err, stdout, tail(stderr, 3000))
	}
	items, _ := itemLines(t, out)
	records := consumeAll(t, broker, "items")
	for _, it := range items {
		r, ok := records[it.Fingerprint]
		if !ok {
			t.Errorf("%s: not in the topic", it.URL)
			continue
		}
		var got store.Item
		if err := json.Unmarshal(r.Value, &got); err != nil || got.URL != it.URL || recordHeader(r, "job") != "kafkasink" ||
			recordHeader(r, "version") != "1" {
			t.Errorf("%s: record of %s (%v), headers job %q version %q", it.URL, got.URL, err, recordHeader(r, "job"), recordHeader(r, "version"))
		}
	}
	if len(records) != len(items) {
		t.Errorf("%d pages in the topic, %d items", len(records), len(items))
	}
	gone := 0
	for _, o := range site.Expected() {
		if o == demosite.Gone {
			gone++
		}
	}
	if failed := consumeAll(t, broker, "items.failed"); len(failed) < gone {
		t.Errorf("%d pages in items.failed, want at least the %d gone", len(failed), gone)
	}
}

// consumeAll reads a topic to its end: the last record of each key.
func consumeAll(t *testing.T, broker, topic string) map[string]*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kmsg.NewPtrListOffsetsRequest()
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = topic
	p := kmsg.NewListOffsetsRequestTopicPartition()
	p.Timestamp = -1 // the end
	lt.Partitions = append(lt.Partitions, p)
	adm.Topics = append(adm.Topics, lt)
	resp, err := adm.RequestWith(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	end := resp.Topics[0].Partitions[0].Offset
	out := map[string]*kgo.Record{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for read := int64(0); read < end; {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("consume %s: %v", topic, err)
		}
		for _, r := range fs.Records() {
			out[string(r.Key)] = r
			read = r.Offset + 1
		}
	}
	return out
}

func recordHeader(r *kgo.Record, key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// TestRun_SinkS3: `crawler run --sink s3://KEY:SECRET@bucket/prefix`
// writes every stored page's item once as a line of a JSON Lines object
// and every failure as an object; with the S3 endpoint stopped mid-crawl
// the run holds its items and ends only once they are all written. The
// secret key shows nowhere in what the run prints, the summary line
// included.
func TestRun_SinkS3(t *testing.T) {
	t.Parallel()
	const secret = "Wh1sper-s3cr3t"
	srv, err := s3test.Start("crawl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	site, base := serveSite(t, faultSite)
	jobFile := writeJob(t, "s3sink", base)
	out := filepath.Join(t.TempDir(), "items.jsonl")
	sinkURI := "s3://AKIDRUN:" + secret + "@crawl/runs?endpoint=" + srv.Endpoint()

	run := start(t, "run", "run", "--job", jobFile, "-o", out, "--concurrency", "8", "--sink", sinkURI)
	testenv.Eventually(t, 2*time.Minute, "the first objects in the bucket", func() bool {
		objs, err := srv.Objects("crawl", "runs/s3sink/items/")
		return err == nil && len(objs) > 0
	})
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	waitHeld(t, run)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	<-run.done
	if code := run.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("crawler run exited %d:\n%s", code, tail(run.out.String(), 4000))
	}
	items, _ := itemLines(t, out)
	lines, err := srv.Lines("crawl", "runs/s3sink/items/")
	if err != nil {
		t.Fatal(err)
	}
	inBucket := map[string]int{}
	for _, l := range lines {
		var it store.Item
		if err := json.Unmarshal([]byte(l), &it); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		inBucket[it.URL]++
	}
	for _, it := range items {
		if inBucket[it.URL] != 1 {
			t.Errorf("%s is in the bucket %d times, want once", it.URL, inBucket[it.URL])
		}
	}
	if len(inBucket) != len(items) || len(site.Expected()) == 0 {
		t.Errorf("%d pages in the bucket, %d items", len(inBucket), len(items))
	}
	failed, err := srv.Objects("crawl", "runs/s3sink/failed/")
	if err != nil {
		t.Fatal(err)
	}
	if want := len(failureURLs(t, store.FailuresPath(out))); len(failed) != want || want == 0 {
		t.Errorf("%d failure objects, %d in the failures file", len(failed), want)
	}
	if strings.Contains(run.out.String(), secret) {
		t.Fatalf("the run printed the secret key:\n%s", tail(run.out.String(), 3000))
	}
	summary := regexp.MustCompile(`sink (\S+): accepted (\d+), retried (\d+), refused 0`).FindStringSubmatch(run.out.String())
	status := regexp.MustCompile(`sinks: s3 accepted (\d+), retried (\d+), refused 0`).FindStringSubmatch(run.out.String())
	if summary == nil || status == nil || status[1] != summary[2] || status[2] != summary[3] {
		t.Errorf("status line %q, metrics line %q: want the same counts", status, summary)
	}
	if summary == nil || summary[1] != "s3://AKIDRUN:xxxxx@crawl/runs?endpoint="+srv.Endpoint() ||
		atoi(summary[2]) < len(items)+len(failed) || atoi(summary[3]) == 0 {
		t.Errorf("summary line %q; want the sink without its secret, at least %d accepted, some retried:\n%s",
			summary, len(items)+len(failed), tail(run.out.String(), 2000))
	}
}
