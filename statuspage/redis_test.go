package statuspage

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
)

// busyCluster writes a cluster in the middle of a crawl: job news half
// done over slaves 0 and 1, an older finished job, slave 5 dead with
// work still queued, and three proxies, two of them with credentials.
func busyCluster(f *fixture) {
	f.submit("older")
	f.crawl("older", step{slave: 0, routed: 10, dups: 2, stored: 9, failed: 1, lps: 3})
	f.rdb.HSet(f.ctx, f.keys.Job("older").State(), cluster.StateField, cluster.StateFinished)
	// a second older than submitted: both submissions can fall in one
	// millisecond (the jobs' score), and a tie lists them by name
	f.rdb.ZIncrBy(f.ctx, f.keys.Jobs(), -1000, "older")
	f.submit("news")
	f.crawl("news", step{slave: 0, routed: 30, dups: 10, stored: 12, failed: 2, lps: 4})
	f.crawl("news", step{slave: 1, routed: 40, stored: 16, failed: 0, lps: 4})
	f.queue("news", 0, 7, 3)
	f.queue("news", 1, 5, 2)
	f.queue("news", 5, 4, 1)
	f.register(0, "crawl-a.internal", 32)
	f.register(1, "crawl-b.internal", 16)
	f.seedProxies("http://alice:s3cret-pass@127.0.0.1:3128", "socks5://bob:hunter2@127.0.0.2:1080",
		"http://127.0.0.3:8080")
}

func TestRedisSource_Snapshot(t *testing.T) {
	f := newFixture(t)
	busyCluster(f)
	snap, err := f.source(func(o *RedisOptions) { o.MaxProxies = 2 }).Snapshot(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Errors) > 0 {
		t.Fatalf("errors: %v", snap.Errors)
	}
	if time.Since(snap.Time).Abs() > time.Minute {
		t.Errorf("time %v: not the Redis clock", snap.Time)
	}
	want := Cluster{Prefix: f.keys.Prefix, MaxSlaves: cluster.DefaultMaxSlaves, Lease: "1m0s", JobsTotal: 2}
	if got := snap.Cluster; got.Prefix != want.Prefix || got.MaxSlaves != want.MaxSlaves || got.Lease != want.Lease ||
		got.JobsTotal != want.JobsTotal || got.Epoch < 2 {
		t.Errorf("cluster %+v, want %+v with epoch >= 2", got, want)
	}
	t.Run("jobs", func(t *testing.T) { checkJobs(t, snap.Jobs) })
	t.Run("slaves", func(t *testing.T) { checkSlaves(t, snap) })
	t.Run("proxies", func(t *testing.T) {
		l := snap.Proxies
		if l == nil || l.Usable != 3 || len(l.Proxies) != 2 {
			t.Fatalf("proxies %+v: want 3 usable, the best 2 listed", l)
		}
		raw, _ := json.Marshal(l)
		for _, secret := range []string{"s3cret", "hunter2", "alice", "bob"} {
			if strings.Contains(string(raw), secret) {
				t.Errorf("proxy listing shows %q: %s", secret, raw)
			}
		}
	})
}

// checkJobs checks the jobs of busyCluster: newest first, with progress.
func checkJobs(t *testing.T, jobs []Job) {
	if len(jobs) != 2 || jobs[0].Job != "news" || jobs[1].Job != "older" {
		t.Fatalf("jobs %+v: want news then older", jobs)
	}
	news := jobs[0]
	// discovered = routed + dups = 80; done = stored + failed + dups = 40.
	p := news.Progress
	if p.Total != 80 || p.Done != 40 || p.Percent != 50 || p.Stored != 35 || p.Failed != 2.5 || p.Duplicates != 12.5 {
		t.Errorf("news progress %+v", p)
	}
	if c := news.Counters; c.Queued != 16 || c.InFlight != 6 || c.ListPages != 8 || news.State != cluster.StateRunning {
		t.Errorf("news %s counters %+v", news.State, c)
	}
	if older := jobs[1]; older.Progress.Percent != 100 || older.State != cluster.StateFinished {
		t.Errorf("older: %s %+v", older.State, older.Progress)
	}
}

// checkSlaves checks the slaves of busyCluster: two live, one dead with
// work, each with its work summed over the jobs.
func checkSlaves(t *testing.T, snap *Snapshot) {
	if len(snap.Slaves) != 3 {
		t.Fatalf("slaves %+v: want 0, 1 and 5", snap.Slaves)
	}
	s0, s1, s5 := snap.Slaves[0], snap.Slaves[1], snap.Slaves[2]
	if s0.ID != 0 || !s0.Live || s0.Host != "crawl-a.internal" || s0.PID != 4000 || s0.Concurrency != 32 ||
		s0.Stored != 21 || s0.Failed != 3 || s0.Queued != 7 || s0.InFlight != 3 || s0.StartedAt.IsZero() {
		t.Errorf("slave 0: %+v", s0)
	}
	if s1.ID != 1 || !s1.Live || s1.Stored != 16 || s1.Queued != 5 || s1.InFlight != 2 || s1.Load() != 2.0/(HeldPerFetcher*16) {
		t.Errorf("slave 1: %+v", s1)
	}
	if s5.ID != 5 || s5.Live || s5.Queued != 4 || s5.InFlight != 1 || !s5.LastHeartbeat.IsZero() {
		t.Errorf("slave 5: %+v", s5)
	}
	for _, s := range []Slave{s0, s1} {
		// Registered moments ago with a one-minute lease: the deadline is
		// a minute ahead, the last heartbeat just behind.
		if age := time.Duration(s.HeartbeatAgeMS) * time.Millisecond; age < 0 || age > 30*time.Second ||
			s.LastHeartbeat.After(snap.Time) {
			t.Errorf("slave %d heartbeat %v, age %v at %v", s.ID, s.LastHeartbeat, age, snap.Time)
		}
	}
	if tok, _ := json.Marshal(snap.Slaves); strings.Contains(string(tok), "run-token") {
		t.Errorf("slaves show their run tokens: %s", tok)
	}
}

func TestRedisSource_HeartbeatAge(t *testing.T) {
	f := newFixture(t)
	f.register(2, "h", 4)
	// Move the lease deadline back 20s, as if the last heartbeat were 20s
	// old (the lease is a minute, so the slave is still live).
	deadline := time.Now().Add(40 * time.Second).UnixMilli()
	if err := f.rdb.ZAdd(f.ctx, f.keys.Nodes().Leases(), redisZ(deadline, "2")).Err(); err != nil {
		t.Fatal(err)
	}
	snap, err := f.source(nil).Snapshot(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Slaves) != 1 {
		t.Fatalf("slaves %+v", snap.Slaves)
	}
	if age := snap.Slaves[0].HeartbeatAgeMS; age < 19000 || age > 30000 {
		t.Errorf("heartbeat age %dms, want about 20s", age)
	}
}

func TestRedisSource_Job(t *testing.T) {
	f := newFixture(t)
	f.submit("news")
	f.crawl("news", step{routed: 4, stored: 1})
	src := f.source(nil)
	j, err := src.Job(f.ctx, "news")
	if err != nil {
		t.Fatal(err)
	}
	if j.Job != "news" || j.Progress.Done != 1 || j.Progress.Total != 4 {
		t.Errorf("job %+v", j)
	}
	if _, err := src.Job(f.ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown job: %v, want ErrNotFound", err)
	}
}

func TestRedisSource_JobsIndexedButNotWritten(t *testing.T) {
	f := newFixture(t)
	f.submit("news")
	// A submission half-way: indexed, its state not written yet.
	if err := f.rdb.ZAdd(f.ctx, f.keys.Jobs(), redisZ(time.Now().UnixMilli()+1, "coming")).Err(); err != nil {
		t.Fatal(err)
	}
	snap, err := f.source(nil).Snapshot(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Jobs) != 1 || snap.Jobs[0].Job != "news" || len(snap.Errors) != 0 || snap.Cluster.JobsTotal != 2 {
		t.Errorf("jobs %+v errors %v total %d", snap.Jobs, snap.Errors, snap.Cluster.JobsTotal)
	}
}

func TestRedisSource_MaxJobs(t *testing.T) {
	f := newFixture(t)
	for _, name := range []string{"a", "b", "c"} {
		f.submit(name) // scored by submission time; a tie sorts by name, the same order
	}
	snap, err := f.source(func(o *RedisOptions) { o.MaxJobs = 2 }).Snapshot(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Jobs) != 2 || snap.Jobs[0].Job != "c" || snap.Jobs[1].Job != "b" || snap.Cluster.JobsTotal != 3 {
		t.Errorf("jobs %v total %d: want the newest two of three", jobNames(snap.Jobs), snap.Cluster.JobsTotal)
	}
}

func TestRedisSource_EmptyCluster(t *testing.T) {
	f := newFixture(t)
	snap, err := f.source(nil).Snapshot(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Jobs) != 0 || len(snap.Slaves) != 0 || snap.Proxies == nil || snap.Proxies.Usable != 0 ||
		len(snap.Errors) != 0 {
		t.Errorf("empty cluster: %+v", snap)
	}
	raw, _ := json.Marshal(snap)
	if !strings.Contains(string(raw), `"jobs":[]`) || !strings.Contains(string(raw), `"proxies":[]`) {
		t.Errorf("empty lists must be [] for the page's script: %s", raw)
	}
}

func TestRedisOptions_Validate(t *testing.T) {
	if err := DefaultRedisOptions().Validate(); err != nil {
		t.Fatal(err)
	}
	for field, mut := range map[string]func(*RedisOptions){
		"MaxSlaves":   func(o *RedisOptions) { o.MaxSlaves = 0 },
		"Lease":       func(o *RedisOptions) { o.Lease = 0 },
		"MaxJobs":     func(o *RedisOptions) { o.MaxJobs = 0 },
		"MaxProxies":  func(o *RedisOptions) { o.MaxProxies = -1 },
		"Concurrency": func(o *RedisOptions) { o.Concurrency = 0 },
	} {
		o := DefaultRedisOptions()
		mut(&o)
		var fe *cluster.FieldError
		if err := o.Validate(); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: %v", field, err)
		}
	}
}

func jobNames(jobs []Job) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.Job
	}
	return out
}
