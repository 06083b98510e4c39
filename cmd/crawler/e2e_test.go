package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/demosite"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/membership"
	"github.com/crawler-dev/crawler/neardup"
	"github.com/crawler-dev/crawler/store"
)

// e2eSite is the loopback site of the cluster tests: 1,000 detail pages
// linked from 50 list pages, each detail linked from one or two pages under
// varying spellings, with pages that are gone and pages that fail once.
var e2eSite = demosite.Options{Details: 1000, PerPage: 30, Overlap: 10}

// clusterEnv is one test's cluster: its Redis key prefix and MongoDB.
type clusterEnv struct {
	redis, prefix, mongo, db string
	rdb                      redis.UniversalClient
	keys                     cluster.Keys
	slaveArgs                []string // extra flags for every slave
	masterArgs               []string // extra flags for every master
}

func newClusterEnv(t *testing.T) clusterEnv {
	rdb, keys := testenv.Redis(t)
	uri, db := testMongo(t)
	return clusterEnv{redis: testenv.RedisURL(), prefix: keys.Prefix, mongo: uri, db: db, rdb: rdb, keys: keys}
}

// testMongo is a MongoDB database of the test's own.
func testMongo(t *testing.T) (uri, db string) { return testenv.MongoDBURI(t) }

// waitSlaves waits until exactly the slaves ids are live in the node table.
func (e clusterEnv) waitSlaves(t *testing.T, ids ...int) {
	t.Helper()
	want := fmt.Sprint(ids)
	testenv.Eventually(t, time.Minute, "slaves "+want+" live", func() bool {
		return fmt.Sprint(e.liveIDs(t)) == want
	})
}

// liveIDs reads the IDs of the live slaves.
func (e clusterEnv) liveIDs(t *testing.T) []int {
	t.Helper()
	reg, err := membership.New(e.rdb, e.keys, membership.Options{})
	if err != nil {
		t.Fatal(err)
	}
	table, err := reg.Snapshot(context.Background())
	if err != nil {
		return nil
	}
	ids := make([]int, len(table.Nodes))
	for i, n := range table.Nodes {
		ids[i] = n.ID
	}
	return ids
}

// suggested is the command line the crawler suggests for the cluster
// at redisURL and prefix: with --redis when the test Redis is not the
// default one (make test starts its own on a free port).
func suggested(redisURL, prefix, path string, args ...string) string {
	cf := clusterFlags{redis: redisURL, prefix: prefix}
	return cf.command(path, args...)
}

func (e clusterEnv) flags(extra ...string) []string {
	return append([]string{"--redis", e.redis, "--prefix", e.prefix}, extra...)
}

func (e clusterEnv) startMaster(t *testing.T, name string) *proc {
	args := append([]string{"master", "--id", name, "--mongo", e.mongo, "--log-format", "json"}, e.masterArgs...)
	return start(t, name, append(args, e.flags()...)...)
}

func (e clusterEnv) startSlave(t *testing.T, id int) *proc {
	args := append([]string{"slave", "--id", fmt.Sprint(id), "--mongo", e.mongo, "--concurrency", "8",
		"--log-format", "json"}, e.slaveArgs...)
	return start(t, fmt.Sprintf("slave-%d", id), append(args, e.flags()...)...)
}

// waitProgress polls the job's counters until cond holds.
func (e clusterEnv) waitProgress(t *testing.T, job, what string, cond func(client.Counters) bool) {
	t.Helper()
	testenv.Eventually(t, 2*time.Minute, what, func() bool {
		st, err := jobStatus(context.Background(), e.rdb, e.keys, job)
		return err == nil && cond(st.Counters)
	})
}

// startCluster starts a master and slaves 0..slaves-1, and waits until
// the master sees them all.
func (e clusterEnv) startCluster(t *testing.T, slaves int) {
	t.Helper()
	e.startMaster(t, "master")
	ids := make([]int, slaves)
	for id := range ids {
		ids[id] = id
		e.startSlave(t, id)
	}
	e.waitSlaves(t, ids...)
}

// submitYAML writes the job file text to a file of the test's and submits
// it as job.
func (e clusterEnv) submitYAML(t *testing.T, job, text string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), job+".yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	e.submit(t, job, path)
}

// submit submits the job file and checks that the job's name is printed.
func (e clusterEnv) submit(t *testing.T, job, jobFile string) {
	t.Helper()
	out, errOut, err := crawler(t, time.Minute, append([]string{"client", "submit", "--job", jobFile}, e.flags()...)...)
	if err != nil || strings.TrimSpace(out) != job {
		t.Fatalf("client submit: %v, stdout %q, stderr %s", err, out, errOut)
	}
}

// wait runs client status --wait --json and returns the final status.
func (e clusterEnv) wait(t *testing.T, job string, timeout time.Duration) client.Status {
	t.Helper()
	out, errOut, err := crawler(t, timeout+time.Minute, append([]string{"client", "status", "--job", job,
		"--wait", "--timeout", timeout.String(), "--json"}, e.flags()...)...)
	if err != nil {
		t.Fatalf("client status --wait: %v\nstdout %s\nstderr %s", err, out, errOut)
	}
	var st client.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status JSON %q: %v", out, err)
	}
	return st
}

// results exports the job's items with client results and reads them.
func (e clusterEnv) results(t *testing.T, job string) []store.Item {
	t.Helper()
	path := filepath.Join(t.TempDir(), "items.jsonl")
	if _, errOut, err := crawler(t, time.Minute, "client", "results", "--mongo", e.mongo, "--job", job, "-o", path); err != nil {
		t.Fatalf("client results: %v: %s", err, errOut)
	}
	return readItems(t, path)
}

func readItems(t *testing.T, path string) []store.Item {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var items []store.Item
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var it store.Item
		if err := json.Unmarshal(sc.Bytes(), &it); err != nil {
			t.Fatalf("item line %q: %v", sc.Text(), err)
		}
		items = append(items, it)
	}
	return items
}

// failedURLs reads the URLs in the job's `failed` collection.
func (e clusterEnv) failedURLs(t *testing.T, job string) []string {
	t.Helper()
	var urls []string
	for _, f := range e.failures(t, job) {
		if f.Reason == "" {
			t.Errorf("failure of %s has no reason", f.URL)
		}
		urls = append(urls, f.URL)
	}
	return urls
}

// failures reads the job's `failed` collection.
func (e clusterEnv) failures(t *testing.T, job string) []store.Failure {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := mongo.Connect(options.Client().ApplyURI(e.mongo))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(ctx)
	cur, err := c.Database(e.db).Collection("failed").Find(ctx, bson.D{{Key: "job", Value: job}})
	if err != nil {
		t.Fatal(err)
	}
	var fails []store.Failure
	if err := cur.All(ctx, &fails); err != nil {
		t.Fatal(err)
	}
	return fails
}

// checkCrawl checks that every unique detail page of the site was stored
// exactly once with the right fields, the gone ones recorded as failed,
// and that the counters add up.
func checkCrawl(t *testing.T, site *demosite.Site, base string, st client.Status, items []store.Item, failed []string) {
	t.Helper()
	checkOutcome(t, site, base, st, items, failed)
	checkNearDuplicates(t, base, items, st.Counters.NearDuplicates)
}

// checkOutcome is checkCrawl without the near-duplicates, for a site too
// small to have reposts.
func checkOutcome(t *testing.T, site *demosite.Site, base string, st client.Status, items []store.Item, failed []string) {
	t.Helper()
	if st.State != "finished" {
		t.Fatalf("state %q, want finished", st.State)
	}
	c := st.Counters
	if c.Discovered != c.Settled() {
		t.Errorf("counters do not add up: discovered %d != stored %d + failed %d + skipped %d + duplicates %d",
			c.Discovered, c.Stored, c.Failed, c.Skipped, c.Duplicates)
	}
	if c.Queued != 0 || c.InFlight != 0 {
		t.Errorf("finished with %d queued and %d in flight", c.Queued, c.InFlight)
	}
	want := site.Expected()
	byURL := map[string]int{}
	for _, it := range items {
		byURL[it.URL]++
	}
	stored, gone := 0, 0
	for path, outcome := range want {
		url := base + path
		switch outcome {
		case demosite.Stored:
			stored++
			if byURL[url] != 1 {
				t.Errorf("%s stored %d times, want once", url, byURL[url])
			}
		case demosite.Gone:
			gone++
			if byURL[url] != 0 {
				t.Errorf("gone page %s stored", url)
			}
		}
	}
	if len(items) != stored || c.Stored != int64(stored) {
		t.Errorf("items exported %d, counted stored %d, want %d", len(items), c.Stored, stored)
	}
	if len(failed) != gone || c.Failed != int64(gone) {
		t.Errorf("failed records %d, counted failed %d, want %d (the gone pages)", len(failed), c.Failed, gone)
	}
	for _, it := range items {
		checkItem(t, base, it)
	}
}

// checkNearDuplicates checks that only the site's reposts (a copy of the
// article before, one word changed) are marked as near-duplicates, each
// pointing at its partner, and that every pair whose stored simhashes are
// within neardup.MaxDistance is found. (Which pairs those are depends on
// the text, and the text on the test server's port, which the image URLs
// carry: simhash-64 at distance 3 catches about 35 of 40.)
func checkNearDuplicates(t *testing.T, base string, items []store.Item, counted int64) {
	t.Helper()
	byID := map[int]store.Item{}
	marked := 0
	for _, it := range items {
		id := detailID(base, it.URL)
		byID[id] = it
		if it.NearDuplicateOf == "" {
			continue
		}
		marked++
		other := detailID(base, it.NearDuplicateOf)
		if pair := (demosite.IsRepost(id) && other == id-1) || (demosite.IsRepost(other) && id == other-1); !pair {
			t.Errorf("page %d marked a near-duplicate of page %d, which is not its repost pair", id, other)
		}
	}
	if int64(marked) != counted {
		t.Errorf("%d items marked near-duplicate, counter says %d", marked, counted)
	}
	reachable := 0
	for id, repost := range byID {
		orig, ok := byID[id-1]
		if !demosite.IsRepost(id) || !ok {
			continue
		}
		if bits.OnesCount64(uint64(repost.Simhash^orig.Simhash)) > neardup.MaxDistance {
			continue
		}
		reachable++
		if repost.NearDuplicateOf != orig.URL && orig.NearDuplicateOf != repost.URL {
			t.Errorf("repost %d is within %d bits of page %d but neither is marked", id, neardup.MaxDistance, id-1)
		}
	}
	if reachable == 0 {
		t.Error("no repost pair within reach of the simhash: the check proved nothing")
	}
}

// detailID is the ID in a detail page URL of the site, or 0.
func detailID(base, url string) int {
	var id int
	_, _ = fmt.Sscanf(strings.TrimPrefix(url, base), "/detail/%d", &id)
	return id
}

// checkItem compares an item's fields with the article the site served.
func checkItem(t *testing.T, base string, it store.Item) {
	t.Helper()
	var id int
	if _, err := fmt.Sscanf(strings.TrimPrefix(it.URL, base), "/detail/%d", &id); err != nil {
		t.Errorf("item URL %s is not a detail page", it.URL)
		return
	}
	a := demosite.ArticleFor(id)
	if it.Fields["title"] != a.Title || it.Fields["body"] != a.Body {
		t.Errorf("item %d: title %q body %.40q, want %q %.40q", id, it.Fields["title"], it.Fields["body"], a.Title, a.Body)
	}
	if img := fmt.Sprint(it.Fields["image"]); img != base+a.Image {
		t.Errorf("item %d: image %q, want %q", id, img, base+a.Image)
	}
	if tags := fmt.Sprint(it.Fields["tags"]); tags != fmt.Sprint(a.Tags) {
		t.Errorf("item %d: tags %s, want %s", id, tags, fmt.Sprint(a.Tags))
	}
	if it.Job == "" || it.FetchedAt.IsZero() || it.Status != 200 || it.Fingerprint == "" {
		t.Errorf("item %d lacks job, fetched_at, status or fingerprint: %+v", id, it)
	}
}

// TestCluster_Crawl runs the whole path with real processes: a master,
// three slaves, and the client's submit, status --wait and results.
func TestCluster_Crawl(t *testing.T) {
	t.Parallel()
	env := newClusterEnv(t)
	site, base := serveSite(t, e2eSite)
	jobFile := writeJob(t, "news", base)

	env.startMaster(t, "master")
	for id := 0; id < 3; id++ {
		env.startSlave(t, id)
	}
	env.waitSlaves(t, 0, 1, 2)
	env.submit(t, "news", jobFile)
	st := env.wait(t, "news", 4*time.Minute)
	checkCrawl(t, site, base, st, env.results(t, "news"), env.failedURLs(t, "news"))

	if len(st.Slaves) != 3 {
		t.Errorf("work spread over %d slaves, want 3: %+v", len(st.Slaves), st.Slaves)
	}
	for id, s := range st.Slaves {
		if s.Stored < st.Counters.Stored/6 {
			t.Errorf("slave %s stored only %d of %d", id, s.Stored, st.Counters.Stored)
		}
	}
	if st.Counters.Retries == 0 {
		t.Error("no retries counted, but the site fails some pages once")
	}
	if st.Counters.Offsite == 0 {
		t.Error("the site's offsite ad links were not counted as offsite")
	}
}

// TestCluster_Recrawl: a job with recrawl_every re-walks its list pages on
// schedule, and every round fetches every detail page it finds again,
// replacing its item, whatever dedup.window says (168h here): the window
// deduplicates within a round, where each link found twice is a
// duplicate, round after round.
func TestCluster_Recrawl(t *testing.T) {
	t.Parallel()
	env := newClusterEnv(t)
	site, base := serveSite(t, demosite.Options{Details: 40, Overlap: 10, GoneEvery: -1, FlakyEvery: -1})
	path := filepath.Join(t.TempDir(), "again.yaml")
	if err := os.WriteFile(path, []byte(demosite.JobYAML("again", base)+"recrawl_every: 1s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env.startMaster(t, "master")
	env.startSlave(t, 0)
	env.waitSlaves(t, 0)
	env.submit(t, "again", path)

	first := env.wait(t, "again", time.Minute)
	if first.Counters.Stored != 40 || first.Counters.Duplicates == 0 {
		t.Fatalf("first round: stored %d, duplicates %d; want 40 and the links the site repeats", first.Counters.Stored,
			first.Counters.Duplicates)
	}
	// The next round starts a second later, well inside the window: it
	// fetches every detail page again, and finds the same duplicates.
	env.waitProgress(t, "again", "a second round fetching every page again", func(c client.Counters) bool {
		return c.Stored >= 80
	})
	if hits := site.Hits("/detail/1"); hits < 2 {
		t.Errorf("/detail/1 fetched %d times in two rounds, want once per round", hits)
	}
	if hits := site.Hits("/list/1"); hits < 2 {
		t.Errorf("/list/1 fetched %d times, want once per round (2+)", hits)
	}
	st, err := jobStatus(context.Background(), env.rdb, env.keys, "again")
	if err != nil {
		t.Fatal(err)
	}
	if r1, r2 := st.Rounds["1"], st.Rounds["2"]; r1.New != 40 || r2.New+r2.Changed+r2.Unchanged+r2.NotModified != 40 {
		t.Errorf("rounds 1 and 2 visited %+v and %+v; want 40 new, then 40 checked again", r1, r2)
	}
	items := env.results(t, "again")
	if len(items) != 40 {
		t.Errorf("%d items after re-crawls, want 40 (replaced, not added)", len(items))
	}
	if st, err = jobStatus(context.Background(), env.rdb, env.keys, "again"); err != nil {
		t.Fatal(err)
	}
	if c := st.Counters; c.Discovered != c.Settled()+c.Queued+c.InFlight {
		t.Errorf("counters do not add up across rounds: %+v", c)
	}
}
