package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/crawler-dev/crawler/internal/testenv"
)

// openTestMongo opens a Mongo store on a database of this test's own, and
// returns a plain driver handle on the same database to check what it wrote.
func openTestMongo(t testing.TB) (*Mongo, *mongo.Database) {
	t.Helper()
	uri, dbName := testenv.MongoDBURI(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := OpenMongo(ctx, uri)
	if err != nil {
		t.Fatalf("OpenMongo(%s): %v", uri, err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	c, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	return m, c.Database(dbName)
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func count(t *testing.T, c *mongo.Collection, filter bson.D) int64 {
	t.Helper()
	n, err := c.CountDocuments(testCtx(t), filter)
	if err != nil {
		t.Fatalf("count %s: %v", c.Name(), err)
	}
	return n
}

func TestMongo_SaveItem(t *testing.T) {
	m, db := openTestMongo(t)
	ctx := testCtx(t)
	at := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	first := Item{ID: ItemID("news", "fp1"), URL: "https://example.com/a", Job: "news", Fingerprint: "fp1",
		Fields: map[string]any{"title": "old"}, FetchedAt: at, Status: 200, Slave: 1}
	second := first
	second.Fields = map[string]any{"title": "new", "tags": []string{"a", "b"}}
	second.Slave, second.Round, second.NearDuplicateOf = 2, 1, "https://example.com/z"
	if err := m.SaveItem(ctx, first); err != nil {
		t.Fatalf("SaveItem first: %v", err)
	}
	if err := m.SaveItem(ctx, second); err != nil {
		t.Fatalf("SaveItem second (same ID): %v", err)
	}
	if n := count(t, db.Collection("items"), bson.D{}); n != 1 {
		t.Fatalf("items holds %d documents, want 1", n)
	}
	var got struct {
		URL       string    `bson:"url"`
		Job       string    `bson:"job"`
		Fields    bson.M    `bson:"fields"`
		FetchedAt time.Time `bson:"fetched_at"`
		Slave     int       `bson:"slave"`
		Round     int64     `bson:"round"`
		Near      string    `bson:"near_duplicate_of"`
	}
	if err := db.Collection("items").FindOne(ctx, bson.D{{Key: "_id", Value: "news:fp1"}}).Decode(&got); err != nil {
		t.Fatalf("find news:fp1: %v", err)
	}
	if got.Fields["title"] != "new" || got.Slave != 2 || got.Round != 1 || got.Near != "https://example.com/z" ||
		got.URL != "https://example.com/a" || got.Job != "news" || !got.FetchedAt.Equal(at) {
		t.Errorf("stored document = %+v; want the second write (title new, slave 2, round 1, near-duplicate)", got)
	}
	if tags := got.Fields["tags"]; !reflect.DeepEqual(tags, bson.A{"a", "b"}) {
		t.Errorf("tags = %#v, want [a b]", tags)
	}
}

func TestMongo_SaveFailure(t *testing.T) {
	m, db := openTestMongo(t)
	ctx := testCtx(t)
	f := Failure{ID: ItemID("news", "fp9"), URL: "https://example.com/gone", Job: "news", Kind: KindDetail,
		Reason: "http status 503", Status: 503, Attempts: 4, Transient: true, FailedAt: time.Now().UTC()}
	if err := m.SaveFailure(ctx, f); err != nil {
		t.Fatalf("SaveFailure: %v", err)
	}
	f.Reason, f.Status, f.Attempts, f.Transient = "http status 404", 404, 1, false
	if err := m.SaveFailure(ctx, f); err != nil {
		t.Fatalf("SaveFailure again: %v", err)
	}
	other := Failure{ID: ItemID("other", "fp9"), URL: "https://example.com/gone", Job: "other", Kind: KindList, Reason: "x"}
	if err := m.SaveFailure(ctx, other); err != nil {
		t.Fatalf("SaveFailure other job: %v", err)
	}
	if n := count(t, db.Collection("failed"), bson.D{}); n != 2 {
		t.Errorf("failed holds %d documents, want 2 (one per job)", n)
	}
	got, err := m.Failures(ctx, "news")
	if err != nil {
		t.Fatalf("Failures: %v", err)
	}
	if len(got) != 1 || got[0].ID != "news:fp9" || got[0].Status != 404 || got[0].Reason != "http status 404" ||
		got[0].Attempts != 1 || got[0].Transient || got[0].Kind != KindDetail {
		t.Errorf("Failures(news) = %+v, want the second record only", got)
	}
	if err := m.DeleteFailure(ctx, "news:fp9"); err != nil {
		t.Fatalf("DeleteFailure: %v", err)
	}
	if got, err := m.Failures(ctx, "news"); err != nil || len(got) != 0 {
		t.Errorf("Failures after delete = %+v, %v; want none", got, err)
	}
	if n := count(t, db.Collection("failed"), bson.D{}); n != 1 {
		t.Errorf("failed holds %d documents after delete, want 1 (the other job's)", n)
	}
}

func TestMongo_ExportItems(t *testing.T) {
	m, _ := openTestMongo(t)
	ctx := testCtx(t)
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, u := range []string{"https://example.com/c", "https://example.com/a", "https://example.com/b"} {
		it := Item{ID: ItemID("news", u), URL: u, Job: "news", Status: 200, FetchedAt: at, Fingerprint: "fp-" + u[len(u)-1:],
			Fields: map[string]any{"title": "T " + u[len(u)-1:], "tags": []string{"x", u[len(u)-1:]}, "none": []string{}}}
		if err := m.SaveItem(ctx, it); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.SaveItem(ctx, Item{ID: "other:1", URL: "https://example.com/0", Job: "other", Fields: map[string]any{"title": "no"}}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	n, err := m.ExportItems(ctx, "news", &buf)
	if err != nil {
		t.Fatalf("ExportItems: %v", err)
	}
	if n != 3 {
		t.Errorf("ExportItems returned %d, want 3", n)
	}
	type line struct {
		URL       string         `json:"url"`
		Job       string         `json:"job"`
		Status    int            `json:"status"`
		FetchedAt time.Time      `json:"fetched_at"`
		FP        string         `json:"fingerprint"`
		Fields    map[string]any `json:"fields"`
	}
	sc := bufio.NewScanner(&buf)
	var urls []string
	for sc.Scan() {
		var l line
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("line %q is not JSON: %v", sc.Text(), err)
		}
		urls = append(urls, l.URL)
		last := l.URL[len(l.URL)-1:]
		want := map[string]any{"title": "T " + last, "tags": []any{"x", last}, "none": []any{}}
		if !reflect.DeepEqual(l.Fields, want) {
			t.Errorf("fields of %s = %#v, want %#v", l.URL, l.Fields, want)
		}
		if l.Job != "news" || l.Status != 200 || !l.FetchedAt.Equal(at) || l.FP != "fp-"+last {
			t.Errorf("line %s: want job news, status 200, fetched_at %s, fingerprint fp-%s", sc.Text(), at.Format(time.RFC3339), last)
		}
		if strings.Contains(sc.Text(), `"_id"`) {
			t.Errorf("line carries _id: %s", sc.Text())
		}
	}
	if want := []string{"https://example.com/a", "https://example.com/b", "https://example.com/c"}; !reflect.DeepEqual(urls, want) {
		t.Errorf("exported URLs = %q, want %q (URL order, job news only)", urls, want)
	}
	t.Run("unknown job writes nothing", func(t *testing.T) {
		var buf bytes.Buffer
		if n, err := m.ExportItems(ctx, "nope", &buf); n != 0 || err != nil || buf.Len() != 0 {
			t.Errorf("ExportItems(nope) = %d, %v, %q; want 0, nil, empty", n, err, buf.String())
		}
	})
	t.Run("csv", func(t *testing.T) {
		var buf bytes.Buffer
		n, err := m.ExportItemsAs(ctx, "news", &buf, FormatCSV)
		if err != nil || n != 3 {
			t.Fatalf("ExportItemsAs(csv) = %d, %v; want 3", n, err)
		}
		want := "url,job,fetched_at,status,round,kind,none,tags,title\n" +
			"https://example.com/a,news,2025-01-02T03:04:05Z,200,0,,,x | a,T a\n" +
			"https://example.com/b,news,2025-01-02T03:04:05Z,200,0,,,x | b,T b\n" +
			"https://example.com/c,news,2025-01-02T03:04:05Z,200,0,,,x | c,T c\n"
		if buf.String() != want {
			t.Errorf("csv =\n%s\nwant\n%s", buf.String(), want)
		}
	})
	t.Run("json", func(t *testing.T) {
		var buf bytes.Buffer
		n, err := m.ExportItemsAs(ctx, "news", &buf, FormatJSON)
		var items []Item
		if jerr := json.Unmarshal(buf.Bytes(), &items); err != nil || n != 3 || jerr != nil || len(items) != 3 || items[0].ID != "news:fp-a" {
			t.Errorf("ExportItemsAs(json) = %d, %v; array %q (%v); want 3 items, the first news:fp-a", n, err, buf.String(), jerr)
		}
	})
}

func TestMongo_JobExists(t *testing.T) {
	m, _ := openTestMongo(t)
	ctx := testCtx(t)
	if err := m.SaveItem(ctx, Item{ID: "stored:1", URL: "u", Job: "stored"}); err != nil {
		t.Fatal(err)
	}
	if err := m.SaveFailure(ctx, Failure{ID: "failed:1", URL: "u", Job: "failed", Reason: "gone"}); err != nil {
		t.Fatal(err)
	}
	for job, want := range map[string]bool{"stored": true, "failed": true, "nosuch": false} {
		if got, err := m.JobExists(ctx, job); err != nil || got != want {
			t.Errorf("JobExists(%s) = %v, %v; want %v", job, got, err, want)
		}
	}
}

func TestOpenMongo(t *testing.T) {
	t.Run("database from the URI path", func(t *testing.T) {
		m, db := openTestMongo(t)
		if m.items.Database().Name() != db.Name() || m.failed.Name() != "failed" || m.items.Name() != "items" {
			t.Errorf("store writes to %s.%s, want %s.items", m.items.Database().Name(), m.items.Name(), db.Name())
		}
		if err := m.SaveItem(testCtx(t), Item{ID: "j:1", URL: "u", Job: "j"}); err != nil {
			t.Fatal(err)
		}
		if n := count(t, db.Collection("items"), bson.D{{Key: "job", Value: "j"}}); n != 1 {
			t.Errorf("database %s holds %d items, want 1", db.Name(), n)
		}
	})
	t.Run("bad scheme names --mongo", func(t *testing.T) {
		_, err := OpenMongo(testCtx(t), "http://user:hunter2@127.0.0.1:27017/db")
		if err == nil || !strings.Contains(err.Error(), "--mongo") {
			t.Fatalf("OpenMongo(http://...) = %v, want an error naming --mongo", err)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("error %q shows the password", err)
		}
	})
	t.Run("no server", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		// Port 1 on loopback: nothing listens there.
		_, err := OpenMongo(ctx, "mongodb://u:secret@127.0.0.1:1/x?serverSelectionTimeoutMS=200")
		if err == nil || strings.Contains(err.Error(), "secret") {
			t.Errorf("OpenMongo(no server) = %v, want an error without the password", err)
		}
	})
}

func TestDatabaseName(t *testing.T) {
	for _, tc := range []struct{ uri, want string }{
		{"mongodb://127.0.0.1:27017/crawl_a", "crawl_a"},
		{"mongodb://127.0.0.1:27017/crawl_b?authSource=admin", "crawl_b"},
		{"mongodb://u:p@h1:1,h2:2/multi?replicaSet=rs", "multi"},
		{"mongodb+srv://cluster.example.com/srv", "srv"},
		{"mongodb://127.0.0.1:27017", DefaultDatabase},
		{"mongodb://127.0.0.1:27017/", DefaultDatabase},
		{"mongodb://127.0.0.1:27017/?w=majority", DefaultDatabase},
	} {
		got, err := databaseName(tc.uri)
		if err != nil || got != tc.want {
			t.Errorf("databaseName(%s) = %q, %v; want %q", tc.uri, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "127.0.0.1:27017/db", "redis://127.0.0.1:6379/0", "postgres://h/db"} {
		if _, err := databaseName(bad); err == nil || !strings.Contains(err.Error(), "--mongo") {
			t.Errorf("databaseName(%q) = %v, want an error naming --mongo", bad, err)
		}
	}
}

func TestRedact(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"mongodb://user:hunter2@127.0.0.1:27017/db", "mongodb://user:xxxxx@127.0.0.1:27017/db"},
		{"mongodb://user@127.0.0.1/db", "mongodb://user@127.0.0.1/db"},
		{"mongodb://127.0.0.1:27017/db?w=1", "mongodb://127.0.0.1:27017/db?w=1"},
		{"redis://user:p%2Fw@127.0.0.1:6379/0", "redis://user:xxxxx@127.0.0.1:6379/0"},
		{"mongodb://u:p@ss@127.0.0.1/db", "mongodb://u:xxxxx@127.0.0.1/db"},
		// A password with an unescaped / # or ? does not parse, or parses
		// with part of it as the host: everything up to the last @ goes.
		{"redis://:abc/def@127.0.0.1:1/0", "redis://xxxxx@127.0.0.1:1/0"},
		{"redis://user:s3cr#t@127.0.0.1:1/0", "redis://xxxxx@127.0.0.1:1/0"},
		{"redis://user:s3cr?t@127.0.0.1:1/0", "redis://xxxxx@127.0.0.1:1/0"},
		{"mongodb://u:abc/def@127.0.0.1:27017/db", "mongodb://xxxxx@127.0.0.1:27017/db"},
		{"mongodb://user:12/34@127.0.0.1/db", "mongodb://xxxxx@127.0.0.1/db"}, // parses: host user, port 12
		{"mongodb://user:hunter2@%zz/db", "mongodb://xxxxx@%zz/db"},
		{"redis+sentinel://:hunter2@h1:26379,h2:26379/mymaster", "redis+sentinel://:xxxxx@h1:26379,h2:26379/mymaster"},
		{"user:hunter2@127.0.0.1:6379", "xxxxx@127.0.0.1:6379"}, // no scheme
		// Secrets in query options.
		{"mongodb://h/db?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:tok3n",
			"mongodb://h/db?authMechanism=MONGODB-AWS&authMechanismProperties=xxxxx"},
		{"mongodb://h/db?tls=true&tlsCertificateKeyFilePassword=hunter2&w=1",
			"mongodb://h/db?tls=true&tlsCertificateKeyFilePassword=xxxxx&w=1"},
		{"mongodb://u:pw@h/db?proxyPassword=hunter2#x", "mongodb://u:xxxxx@h/db?proxyPassword=xxxxx#x"},
		{"https://lists.example.com/p.txt?token=s3cr3t&format=txt", "https://lists.example.com/p.txt?token=xxxxx&format=txt"},
		{"https://h/p?api_key=1&apiKey=2&sig=3&X-Amz-Signature=4&access_token=5&secret=6",
			"https://h/p?api_key=xxxxx&apiKey=xxxxx&sig=xxxxx&X-Amz-Signature=xxxxx&access_token=xxxxx&secret=xxxxx"},
	} {
		if got := Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestOpenMongo_unreachable (issue 18, item 6): a MongoDB that does not
// answer is ErrUnreachable, saying which address was tried and what it
// answered, not the driver's raw server-selection error.
func TestOpenMongo_unreachable(t *testing.T) {
	_, err := OpenMongo(context.Background(), "mongodb://127.0.0.1:1/db?serverSelectionTimeoutMS=300")
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("OpenMongo of a closed port: %v, want ErrUnreachable", err)
	}
	msg := err.Error()
	for _, want := range []string{"127.0.0.1:1", "connection refused"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	for _, raw := range []string{"topology", "server selection"} {
		if strings.Contains(msg, raw) {
			t.Errorf("error %q shows the driver's %q", msg, raw)
		}
	}
}
