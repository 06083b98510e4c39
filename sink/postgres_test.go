package sink

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/store"
)

// item is the item of page n of job.
func item(job string, n int, title string) store.Item {
	fp := fmt.Sprintf("%040x", n)
	return store.Item{ID: store.ItemID(job, fp), URL: fmt.Sprintf("http://127.0.0.1/p/%d", n), Job: job, Fingerprint: fp,
		Fields: map[string]any{"title": title}, Status: 200, FetchedAt: time.Now().UTC().Truncate(time.Microsecond)}
}

func openTestPostgres(t *testing.T) (Sink, *pgxpool.Pool, string) {
	t.Helper()
	pool, table := testenv.Postgres(t)
	s, _, err := Open(context.Background(), testenv.PostgresSink(table), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, pool, table
}

func put(t *testing.T, s Sink, recs ...Record) {
	t.Helper()
	for i, err := range s.Put(context.Background(), recs) {
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
}

// row is what the table holds of a page.
type row struct {
	title              string
	version            int64
	first, changed, at time.Time
}

func readRow(t *testing.T, pool *pgxpool.Pool, table string, it store.Item) row {
	t.Helper()
	var r row
	err := pool.QueryRow(context.Background(), fmt.Sprintf(`SELECT fields->>'title', version, first_seen_at, changed_at, fetched_at
		FROM %s WHERE job = $1 AND fingerprint = $2`, table), it.Job, it.Fingerprint).Scan(&r.title, &r.version, &r.first, &r.changed, &r.at)
	if err != nil {
		t.Fatalf("read %s: %v", it.URL, err)
	}
	return r
}

func countRows(t *testing.T, pool *pgxpool.Pool, table string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPostgres_Put: one row per page, however often it comes; the
// version moves only when the fields change; a 304 moves only fetched_at;
// a retried page's failure record goes.
func TestPostgres_Put(t *testing.T) {
	s, pool, table := openTestPostgres(t)
	ctx := context.Background()
	a, b := item("news", 1, "A"), item("news", 2, "B")
	put(t, s, Record{Item: a}, Record{Item: b})
	put(t, s, Record{Item: a}) // a redelivery
	if n := countRows(t, pool, table); n != 2 {
		t.Fatalf("%d rows, want 2", n)
	}
	first := readRow(t, pool, table, a)
	if first.version != 1 || first.title != "A" || !first.first.Equal(a.FetchedAt) {
		t.Fatalf("row %+v, want version 1 first seen at %v", first, a.FetchedAt)
	}

	changed := a
	changed.Fields = map[string]any{"title": "A2"}
	changed.FetchedAt = a.FetchedAt.Add(time.Hour)
	put(t, s, Record{Item: changed})
	put(t, s, Record{Item: changed}) // redelivered: no second bump
	got := readRow(t, pool, table, a)
	if got.version != 2 || got.title != "A2" || !got.changed.Equal(changed.FetchedAt) || !got.first.Equal(first.first) {
		t.Fatalf("after a change: %+v, want version 2, changed at %v, first seen kept", got, changed.FetchedAt)
	}

	notModified := store.Item{ID: a.ID, URL: a.URL, Job: a.Job, Fingerprint: a.Fingerprint, FetchedAt: a.FetchedAt.Add(2 * time.Hour)}
	put(t, s, Record{Item: notModified, NotModified: true})
	got = readRow(t, pool, table, a)
	if got.version != 2 || got.title != "A2" || !got.at.Equal(notModified.FetchedAt) || !got.changed.Equal(changed.FetchedAt) {
		t.Fatalf("after a 304: %+v, want only fetched_at moved to %v", got, notModified.FetchedAt)
	}

	c := item("news", 3, "C")
	f := store.Failure{ID: c.ID, URL: c.URL, Job: c.Job, Kind: store.KindDetail, Reason: "503", Status: 503, Attempts: 3,
		Transient: true, FailedAt: time.Now().UTC()}
	if err := s.PutFailure(ctx, f); err != nil {
		t.Fatal(err)
	}
	if err := s.PutFailure(ctx, f); err != nil { // recorded again: replaced
		t.Fatal(err)
	}
	if n := countRows(t, pool, table+"_failed"); n != 1 {
		t.Fatalf("%d failure rows, want 1", n)
	}
	put(t, s, Record{Item: c, Retried: true})
	if n := countRows(t, pool, table+"_failed"); n != 0 {
		t.Fatalf("%d failure rows after the page was stored on retry, want 0", n)
	}
}

// TestPostgres_refused: a value PostgreSQL cannot hold (a NUL character)
// refuses its record alone; the rest of the batch is written.
func TestPostgres_refused(t *testing.T) {
	s, pool, table := openTestPostgres(t)
	bad := item("news", 2, "nul \x00 here")
	errs := s.Put(context.Background(), []Record{{Item: item("news", 1, "A")}, {Item: bad}, {Item: item("news", 3, "C")}})
	if errs[0] != nil || errs[2] != nil {
		t.Fatalf("good records not taken: %v", errs)
	}
	if !errors.Is(errs[1], ErrRefused) {
		t.Fatalf("record with a NUL: %v, want ErrRefused", errs[1])
	}
	if n := countRows(t, pool, table); n != 2 {
		t.Fatalf("%d rows, want 2", n)
	}
}

// TestPostgres_wrongTable: an existing table without the columns or key
// the sink writes is an error that names what is wrong.
func TestPostgres_wrongTable(t *testing.T) {
	pool, table := testenv.Postgres(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, fmt.Sprintf(`CREATE TABLE %s (job text, fingerprint text, url text, fields text)`, table)); err != nil {
		t.Fatal(err)
	}
	_, _, err := Open(ctx, testenv.PostgresSink(table), nil)
	for _, want := range []string{"table " + table + " has the wrong columns", "fields is text, not jsonb", "version bigint is missing"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("Open on a table with the wrong columns: %v, want it to say %q", err, want)
		}
	}
	if _, err := pool.Exec(ctx, fmt.Sprintf(`DROP TABLE %s; CREATE TABLE %[1]s (job text, fingerprint text, url text, kind text,
		status integer, fields jsonb, content_hash text, version bigint, first_seen_at timestamptz, changed_at timestamptz,
		fetched_at timestamptz)`, table)); err != nil {
		t.Fatal(err)
	}
	_, _, err = Open(ctx, testenv.PostgresSink(table), nil)
	if err == nil || !strings.Contains(err.Error(), "no unique key on (job, fingerprint)") {
		t.Fatalf("Open on a table without the key: %v", err)
	}
}

// TestPostgres_privileges: a role that may not create the missing table,
// or write the existing one, gets an error naming the privilege.
func TestPostgres_privileges(t *testing.T) {
	pool, table := testenv.Postgres(t)
	ctx := context.Background()
	role := table + "_role"
	if _, err := pool.Exec(ctx, "CREATE ROLE "+role+" LOGIN"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = pool.Exec(context.Background(), "DROP OWNED BY "+role)
		_, _ = pool.Exec(context.Background(), "DROP ROLE "+role)
	})
	if _, err := pool.Exec(ctx, "REVOKE CREATE ON SCHEMA public FROM PUBLIC"); err != nil {
		t.Fatal(err)
	}
	uri := strings.Replace(testenv.PostgresSink(table), "postgres@", role+"@", 1)
	_, _, err := Open(ctx, uri, nil)
	if err == nil || !strings.Contains(err.Error(), "may not create it") || !strings.Contains(err.Error(), "grant it CREATE on the schema") {
		t.Fatalf("Open without CREATE: %v", err)
	}
	// The tables made by someone else, readable but not writable.
	admin, _, err := Open(ctx, testenv.PostgresSink(table), nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = admin.Close()
	if _, err := pool.Exec(ctx, fmt.Sprintf("GRANT SELECT ON %s, %s_failed TO %s", table, table, role)); err != nil {
		t.Fatal(err)
	}
	_, _, err = Open(ctx, uri, nil)
	if err == nil || !strings.Contains(err.Error(), "lacks INSERT, UPDATE, DELETE on table "+table) {
		t.Fatalf("Open without INSERT: %v", err)
	}
}
