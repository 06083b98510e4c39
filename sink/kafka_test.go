package sink

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/metrics"
	"github.com/crawler-dev/crawler/store"
)

// startKafka starts an in-process Kafka (kfake) on a loopback port with
// the topics "items" and "items.failed", keeping its data in dir so that
// a restart on the same port finds it.
func startKafka(t *testing.T, port int, dir string) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port), kfake.DataDir(dir), kfake.SyncWrites(),
		kfake.SeedTopics(2, "items", "items.failed"))
	if err != nil {
		t.Fatalf("start kfake: %v", err)
	}
	return c
}

// freePort is a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// consumed reads every record of topic from the start.
func consumed(t *testing.T, broker, topic string, want int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out []*kgo.Record
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for len(out) < want {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("consume %s after %d records: %v", topic, len(out), err)
		}
		out = append(out, fs.Records()...)
	}
	return out
}

// itemBatch is n records of pages from, from+1, …, of job.
func itemBatch(job string, from, n int) []Record {
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = Record{Item: item(job, from+i, fmt.Sprint(from+i))}
	}
	return recs
}

func header(r *kgo.Record, key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// TestKafka_Put: one record per item, key the fingerprint, value its
// JSON, headers job and version; failures to items.failed.
func TestKafka_Put(t *testing.T) {
	c := startKafka(t, 0, t.TempDir())
	defer c.Close()
	broker := c.ListenAddrs()[0]
	s, _, err := Open(context.Background(), "kafka://"+broker+"/items", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a := item("news", 1, "A")
	a.Version = 2
	put(t, s, Record{Item: a}, Record{Item: item("news", 2, "B")})
	f := store.Failure{ID: store.ItemID("news", a.Fingerprint), URL: "http://127.0.0.1/gone", Job: "news", Kind: store.KindDetail, Reason: "404"}
	if err := s.PutFailure(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	recs := consumed(t, broker, "items", 2)
	byKey := map[string]*kgo.Record{}
	for _, r := range recs {
		byKey[string(r.Key)] = r
	}
	r := byKey[a.Fingerprint]
	var got store.Item
	if r == nil || json.Unmarshal(r.Value, &got) != nil || got.URL != a.URL || got.Fields["title"] != "A" ||
		header(r, "job") != "news" || header(r, "version") != "2" {
		t.Fatalf("record of %s: %+v", a.URL, r)
	}
	failed := consumed(t, broker, "items.failed", 1)
	if string(failed[0].Key) != a.Fingerprint || !strings.Contains(string(failed[0].Value), `"reason":"404"`) {
		t.Fatalf("failure record %s: %s", failed[0].Key, failed[0].Value)
	}
}

// TestKafka_missingTopic: a topic that does not exist is an error naming
// it, before the crawl starts.
func TestKafka_missingTopic(t *testing.T) {
	c := startKafka(t, 0, t.TempDir())
	defer c.Close()
	_, _, err := Open(context.Background(), "kafka://"+c.ListenAddrs()[0]+"/crawl", nil)
	if err == nil || !strings.Contains(err.Error(), "topic crawl does not exist") {
		t.Fatalf("Open with a missing topic: %v", err)
	}
}

// TestKafka_brokerStopped: with the broker stopped the batch is held (the
// idempotent producer retries it), and once the broker is back on its
// port every page is in the topic at least once.
func TestKafka_brokerStopped(t *testing.T) {
	port, dir := freePort(t), t.TempDir()
	c := startKafka(t, port, dir)
	broker := "127.0.0.1:" + strconv.Itoa(port)
	s, spec, err := Open(context.Background(), "kafka://"+broker+"/items", nil)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := metrics.New(metrics.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	f := NewFanout([]Sink{s}, []Spec{spec}, reg.Sinks(), nil)
	defer f.Close()
	batch := func(from int) []Record { return itemBatch("news", from, 50) }
	for _, err := range f.Put(context.Background(), batch(0)) {
		if err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	done := make(chan []error)
	go func() { done <- f.Put(context.Background(), batch(50)) }()
	testenv.Eventually(t, time.Minute, "the producer to try the stopped broker", func() bool {
		return s.(*Kafka).client.BufferedProduceRecords() > 0
	})
	select {
	case errs := <-done:
		t.Fatalf("Put returned with the broker down: %v", errs[0])
	default:
	}
	c = startKafka(t, port, dir)
	defer c.Close()
	for _, err := range <-done {
		if err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]int{}
	for _, r := range consumed(t, broker, "items", 100) {
		seen[string(r.Key)]++
	}
	for i := range 100 {
		if fp := item("news", i, "").Fingerprint; seen[fp] == 0 {
			t.Errorf("page %d is not in the topic", i)
		}
	}
}
