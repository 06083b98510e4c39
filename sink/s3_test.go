package sink

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/credentials"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/metrics"
	"github.com/crawler-dev/crawler/sink/s3test"
	"github.com/crawler-dev/crawler/store"
)

// The test's credentials: the secret must never show in a log or an error.
const (
	s3Access = "AKIDCRAWLERTEST"
	s3Secret = "s3cr3t-Wh1sper"
)

func startS3(t *testing.T, buckets ...string) *s3test.Server {
	t.Helper()
	srv, err := s3test.Start(buckets...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// s3URI is an s3:// URI for bucket/prefix on srv, with the test's keys.
func s3URI(srv *s3test.Server, bucketPrefix, query string) string {
	u := "s3://" + s3Access + ":" + s3Secret + "@" + bucketPrefix + "?endpoint=" + srv.Endpoint()
	if query != "" {
		u += "&" + query
	}
	return u
}

// storedItems decodes every line under prefix as an item, and fails on a
// line that is not one.
func storedItems(t *testing.T, srv *s3test.Server, bucket, prefix string) []store.Item {
	t.Helper()
	lines, err := srv.Lines(bucket, prefix)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]store.Item, len(lines))
	for i, l := range lines {
		if err := json.Unmarshal([]byte(l), &out[i]); err != nil {
			t.Fatalf("line %d %q: %v", i, l, err)
		}
	}
	return out
}

// TestS3_Put: each item is one line of JSON in an object of its job under
// the prefix, as client results writes it; a 304 writes nothing; a
// failure is an object of its own, dropped once the page is stored on
// retry.
func TestS3_Put(t *testing.T) {
	srv := startS3(t, "crawl")
	s, spec, err := Open(context.Background(), s3URI(srv, "crawl/out/v1", ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if spec.Scheme != "s3" || strings.Contains(spec.String(), s3Secret) {
		t.Fatalf("spec %s (scheme %s)", spec, spec.Scheme)
	}
	a, b, c := item("news", 1, "A"), item("news", 2, "B"), item("shop", 3, "C")
	f := store.Failure{ID: store.ItemID("news", a.Fingerprint), URL: a.URL, Job: "news", Kind: store.KindDetail, Reason: "503"}
	if err := s.PutFailure(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	put(t, s, Record{Item: a, Retried: true}, Record{Item: b}, Record{Item: c}, Record{Item: item("news", 4, ""), NotModified: true})

	objs, err := srv.Objects("crawl", "out/v1/")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range objs {
		keys = append(keys, k)
	}
	if len(objs) != 2 {
		t.Fatalf("objects %v, want one per job (the failure dropped on retry)", keys)
	}
	news := storedItems(t, srv, "crawl", "out/v1/news/items/")
	if len(news) != 2 || news[0].URL != a.URL || news[0].Fields["title"] != "A" || news[1].URL != b.URL || news[1].Job != "news" {
		t.Fatalf("news items %+v", news)
	}
	shop := storedItems(t, srv, "crawl", "out/v1/shop/items/")
	if len(shop) != 1 || shop[0].Fingerprint != c.Fingerprint || !shop[0].FetchedAt.Equal(c.FetchedAt) {
		t.Fatalf("shop items %+v", shop)
	}
	day := time.Now().UTC().Format("2006/01/02/")
	for k := range objs {
		if !strings.Contains(k, "/items/"+day) || !strings.HasSuffix(k, ".jsonl") {
			t.Errorf("object %s is not under items/YYYY/MM/DD/HH/…jsonl", k)
		}
	}

	g := store.Failure{ID: store.ItemID("news", b.Fingerprint), URL: b.URL, Job: "news", Kind: store.KindDetail, Reason: "404"}
	if err := s.PutFailure(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	failed, err := srv.Objects("crawl", "out/v1/news/failed/")
	if err != nil {
		t.Fatal(err)
	}
	if body := failed["out/v1/news/failed/"+b.Fingerprint+".json"]; !strings.Contains(string(body), `"reason":"404"`) {
		t.Fatalf("failure objects %v", failed)
	}
}

// TestS3_maxSize: a batch whose lines pass ?max_size= is cut into objects
// no larger (but for a line larger alone), none losing a line; an object
// larger than a part goes up as a multipart upload.
func TestS3_maxSize(t *testing.T) {
	srv := startS3(t, "crawl")
	s, _, err := Open(context.Background(), s3URI(srv, "crawl", "max_size=4KiB"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	recs := make([]Record, 100)
	for i := range recs {
		recs[i] = Record{Item: item("news", i, strings.Repeat("t", 200))}
	}
	put(t, s, recs...)
	objs, err := srv.Objects("crawl", "news/items/")
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) < 6 {
		t.Fatalf("%d objects for ~30KiB at max_size=4KiB", len(objs))
	}
	for k, body := range objs {
		if len(body) > 4<<10 {
			t.Errorf("object %s is %d bytes", k, len(body))
		}
	}
	if got := storedItems(t, srv, "crawl", "news/items/"); len(got) != 100 {
		t.Fatalf("%d items, want 100", len(got))
	}

	big, _, err := Open(context.Background(), s3URI(srv, "crawl/big", ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	recs = recs[:1]
	recs[0].Item.Fields["body"] = strings.Repeat("b", s3PartSize+1000)
	put(t, big, recs...)
	if srv.MultipartUploads() != 1 {
		t.Fatalf("multipart uploads %d, want 1 for an object over %d bytes", srv.MultipartUploads(), s3PartSize)
	}
	if got := storedItems(t, srv, "crawl", "big/"); len(got) != 1 || len(got[0].Fields["body"].(string)) != s3PartSize+1000 {
		t.Fatalf("the large item did not come back whole")
	}
}

// TestS3_missingBucket: a bucket that does not exist is an error naming
// it, before the crawl starts; and it never shows the secret key.
func TestS3_missingBucket(t *testing.T) {
	srv := startS3(t, "crawl")
	_, _, err := Open(context.Background(), s3URI(srv, "archive/items", ""), nil)
	if err == nil || !strings.Contains(err.Error(), "bucket archive does not exist") {
		t.Fatalf("Open with a missing bucket: %v", err)
	}
	if strings.Contains(err.Error(), s3Secret) {
		t.Fatalf("the error shows the secret key: %v", err)
	}
}

// TestS3_serverDown: while the endpoint refuses connections the batch is
// held (Put does not return; the tries count as retried, the log says so
// once), and once it is back every item is in the bucket exactly once.
// Neither the log nor the metrics' names show the secret key.
func TestS3_serverDown(t *testing.T) {
	srv := startS3(t, "crawl")
	core, logs := observer.New(zapcore.DebugLevel)
	s, spec, err := Open(context.Background(), s3URI(srv, "crawl/items", ""), zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	reg, err := metrics.New(metrics.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	f := NewFanout([]Sink{s}, []Spec{spec}, reg.Sinks(), zap.New(core))
	defer f.Close()
	batch := func(from int) []Record { return itemBatch("news", from, 50) }
	for _, err := range f.Put(context.Background(), batch(0)) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	done := make(chan []error)
	go func() { done <- f.Put(context.Background(), batch(50)) }()
	testenv.Eventually(t, 2*time.Minute, "the fan-out to try the stopped server again", func() bool {
		return sinkCounts(t, reg)[spec.String()+" "+metrics.SinkRetried] > 0
	})
	select {
	case errs := <-done:
		t.Fatalf("Put returned with the server down: %v", errs[0])
	default:
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	for _, err := range <-done {
		if err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]int{}
	for _, it := range storedItems(t, srv, "crawl", "items/") {
		seen[it.Fingerprint]++
	}
	for i := range 100 {
		if n := seen[item("news", i, "").Fingerprint]; n != 1 {
			t.Errorf("page %d is in the bucket %d times", i, n)
		}
	}
	held := logs.FilterMessage("sink did not take records; holding their tasks and trying again").All()
	if len(held) != 1 {
		t.Fatalf("%d 'holding' log entries, want 1", len(held))
	}
	for _, e := range logs.All() {
		line := e.Message + fmt.Sprint(e.ContextMap())
		if strings.Contains(line, s3Secret) {
			t.Fatalf("the log shows the secret key: %s", line)
		}
	}
	counts := sinkCounts(t, reg)
	for n := range counts {
		if strings.Contains(n, s3Secret) || !strings.HasPrefix(n, "s3://") {
			t.Fatalf("sink label %q", n)
		}
	}
	if counts[spec.String()+" "+metrics.SinkAccepted] != 100 {
		t.Fatalf("counts %v, want 100 accepted", counts)
	}
}

// TestS3_uri: what an s3:// URI can get wrong is an error that says what,
// without its secret.
func TestS3_uri(t *testing.T) {
	for _, tc := range []struct{ uri, want string }{
		{"s3:///items", "no bucket"},
		{"s3:bucket", "no bucket"},
		{"s3://crawl:9000/items", "the server goes in ?endpoint="},
		{"s3://Crawl_Items/x", `bucket "Crawl_Items"`},
		{"s3://" + s3Access + "@crawl/x", "ACCESS_KEY:SECRET_KEY@"},
		{"s3://crawl/x?endpoint=ftp://127.0.0.1:9000", "?endpoint=ftp://127.0.0.1:9000"},
		{"s3://crawl/x?endpoint=127.0.0.1:", "a host and a port"},
		{"s3://crawl/x?max_size=12", "?max_size=12: not a size of at least 1KiB"},
		{"s3://crawl/x?window=1m", "?window= is not supported"},
		{"s3://crawl/x?acl=public", `unknown option "acl"`},
		{"s3://" + s3Access + ":" + s3Secret + "@crawl/x?storage=cold", `unknown option "storage"`},
	} {
		_, err := Parse(tc.uri)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q): %v, want %q", tc.uri, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), s3Secret) {
			t.Errorf("Parse(%q) shows the secret: %v", tc.uri, err)
		}
	}
	for _, ok := range []string{"s3://crawl", "s3://crawl/a/b?region=eu-west-1&max_size=64MiB",
		"s3://crawl/x?endpoint=minio.internal:9000", "s3://crawl/x?endpoint=https://s3.example.com"} {
		if _, err := Parse(ok); err != nil {
			t.Errorf("Parse(%q): %v", ok, err)
		}
	}
}

// TestS3_envCredentials: without keys in the URI the sink takes them from
// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
func TestS3_envCredentials(t *testing.T) {
	srv := startS3(t, "crawl")
	t.Setenv("AWS_ACCESS_KEY_ID", s3Access)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3Secret)
	s, _, err := Open(context.Background(), "s3://crawl/env?endpoint="+srv.Endpoint(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	o := s.(*S3).opts
	if v, err := o.creds().GetWithContext(&credentials.CredContext{Client: http.DefaultClient}); err != nil || v.AccessKeyID != s3Access {
		t.Fatalf("credentials %+v, %v", v.AccessKeyID, err)
	}
	put(t, s, Record{Item: item("news", 1, "A")})
	if got := storedItems(t, srv, "crawl", "env/"); len(got) != 1 {
		t.Fatalf("%d items", len(got))
	}
}

// TestS3_copiesWARC: with warc: beside it, the s3:// sink copies each
// completed WARC file to PREFIX/warc/, byte for byte, the last one once
// the fan-out closes; files completed while the store was down are copied
// when it is back; a later start skips the files copied and copies its
// own.
func TestS3_copiesWARC(t *testing.T) {
	srv := startS3(t, "crawl")
	site := latin1Site(t)
	dir := filepath.Join(t.TempDir(), "warc")
	open := func() *Fanout {
		var sinks []Sink
		var specs []Spec
		for _, uri := range []string{"warc:" + dir + "?max_size=4KiB", s3URI(srv, "crawl/arch", "")} {
			s, spec, err := Open(context.Background(), uri, nil)
			if err != nil {
				t.Fatal(err)
			}
			sinks, specs = append(sinks, s), append(specs, spec)
		}
		return NewFanout(sinks, specs, nil, nil)
	}
	f := open()
	recs := fetchExchanges(t, site.URL, 12)
	put := func(recs []Record) {
		for _, err := range f.Put(context.Background(), recs) {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	put(recs[:3])
	put(recs[3:6])
	testenv.Eventually(t, time.Minute, "the first completed file in the bucket", func() bool {
		objs, err := srv.Objects("crawl", "arch/warc/")
		return err == nil && len(objs) > 0
	})
	before := len(warcFilesNow(dir))
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		put(recs[6:12])
	}()
	testenv.Eventually(t, time.Minute, "a file completed while the store is down", func() bool {
		return len(warcFilesNow(dir)) > before
	})
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	<-done
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	checkWARCCopies(t, srv, dir)

	// a later start finds every file copied, and copies a new one
	f = open()
	put(fetchExchanges(t, site.URL, 3))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	checkWARCCopies(t, srv, dir)
}

// warcFilesNow lists the completed WARC files of dir.
func warcFilesNow(dir string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	return files
}

// checkWARCCopies checks that the bucket holds each completed WARC file
// of dir, byte for byte, and nothing else.
func checkWARCCopies(t *testing.T, srv *s3test.Server, dir string) {
	t.Helper()
	objs, err := srv.Objects("crawl", "arch/warc/")
	if err != nil {
		t.Fatal(err)
	}
	files := warcFiles(t, dir)
	if len(objs) != len(files) {
		t.Fatalf("%d objects for %d files", len(objs), len(files))
	}
	for _, file := range files {
		body, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if got := objs["arch/warc/"+filepath.Base(file)]; !bytes.Equal(got, body) {
			t.Errorf("copy of %s: %d bytes, file %d", filepath.Base(file), len(got), len(body))
		}
	}
}
