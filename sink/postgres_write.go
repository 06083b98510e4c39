package sink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/crawler-dev/crawler/store"
)

// upsertItems writes a batch of items from arrays, one row each. A page
// seen before gets its version bumped and changed_at set only when its
// content hash differs, so a redelivered item changes nothing but its
// fetch time.
const upsertItems = `INSERT INTO %[1]s AS o (job, fingerprint, url, kind, status, fields, content_hash, version,
	first_seen_at, changed_at, fetched_at)
SELECT j, f, u, k, s, d::jsonb, h, 1, t, t, t
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::integer[], $6::text[], $7::text[], $8::timestamptz[])
	AS x(j, f, u, k, s, d, h, t)
ON CONFLICT (job, fingerprint) DO UPDATE SET
	url = excluded.url, kind = excluded.kind, status = excluded.status, fields = excluded.fields,
	content_hash = excluded.content_hash,
	version = o.version + (o.content_hash IS DISTINCT FROM excluded.content_hash)::integer,
	changed_at = CASE WHEN o.content_hash IS DISTINCT FROM excluded.content_hash THEN excluded.changed_at ELSE o.changed_at END,
	fetched_at = excluded.fetched_at`

// touchItems records the fetch of pages that answered 304.
const touchItems = `UPDATE %[1]s AS o SET fetched_at = x.t
FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS x(j, f, t)
WHERE o.job = x.j AND o.fingerprint = x.f`

// dropFailures deletes the failure records of pages now stored.
const dropFailures = `DELETE FROM %[1]s WHERE (job, fingerprint) IN
	(SELECT j, f FROM unnest($1::text[], $2::text[]) AS x(j, f))`

// upsertFailure records one failure.
const upsertFailure = `INSERT INTO %[1]s (job, fingerprint, url, kind, page_kind, reason, status, attempts, transient, failed_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
ON CONFLICT (job, fingerprint) DO UPDATE SET url = excluded.url, kind = excluded.kind, page_kind = excluded.page_kind,
	reason = excluded.reason, status = excluded.status, attempts = excluded.attempts, transient = excluded.transient,
	failed_at = excluded.failed_at`

// Put writes recs in one transaction (one round trip). When the server
// refuses the batch for a record's data, each record is written alone,
// so that only the ones it refuses are refused.
func (p *Postgres) Put(ctx context.Context, recs []Record) []error {
	err := p.put(ctx, recs)
	errs := make([]error, len(recs))
	if err == nil {
		return errs
	}
	if !errors.Is(err, ErrRefused) || len(recs) == 1 {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	for i := range recs {
		errs[i] = p.put(ctx, recs[i:i+1])
	}
	return errs
}

// put writes recs in one implicit transaction.
func (p *Postgres) put(ctx context.Context, recs []Record) error {
	var b pgx.Batch
	rows, err := itemRows(recs)
	if err != nil {
		return err
	}
	if len(rows.job) > 0 {
		b.Queue(fmt.Sprintf(upsertItems, p.table), rows.job, rows.fp, rows.url, rows.kind, rows.status, rows.fields, rows.hash, rows.at)
	}
	if t := touchRows(recs); len(t.job) > 0 {
		b.Queue(fmt.Sprintf(touchItems, p.table), t.job, t.fp, t.at)
	}
	if j, f := retriedKeys(recs); len(j) > 0 {
		b.Queue(fmt.Sprintf(dropFailures, p.failed), j, f)
	}
	if b.Len() == 0 {
		return nil
	}
	if err := p.pool.SendBatch(ctx, &b).Close(); err != nil {
		return classify(fmt.Errorf("write %d items: %w", len(recs), err))
	}
	return nil
}

// rows are records as the arrays of upsertItems.
type rows struct {
	job, fp, url, kind, fields, hash []string
	status                           []int32
	at                               []time.Time
}

// itemRows lays out the fetched records (not the 304s), the last record
// of a page winning: one statement may not write a row twice.
func itemRows(recs []Record) (rows, error) {
	var r rows
	at := map[string]int{}
	for _, rec := range recs {
		if rec.NotModified {
			continue
		}
		it := rec.Item
		fields, err := json.Marshal(it.Fields)
		if err != nil {
			return rows{}, fmt.Errorf("item %s: fields are not JSON: %w: %w", it.URL, err, ErrRefused)
		}
		key := it.Job + "\x00" + it.Fingerprint
		if i, ok := at[key]; ok {
			r.url[i], r.kind[i], r.status[i], r.fields[i], r.hash[i], r.at[i] =
				it.URL, it.Kind, int32(it.Status), string(fields), store.ContentHash(it.Fields), fetchedAt(it)
			continue
		}
		at[key] = len(r.job)
		r.job, r.fp, r.url, r.kind = append(r.job, it.Job), append(r.fp, it.Fingerprint), append(r.url, it.URL), append(r.kind, it.Kind)
		r.status, r.fields = append(r.status, int32(it.Status)), append(r.fields, string(fields))
		r.hash, r.at = append(r.hash, store.ContentHash(it.Fields)), append(r.at, fetchedAt(it))
	}
	return r, nil
}

// touchRows lays out the 304s.
func touchRows(recs []Record) rows {
	var r rows
	for _, rec := range recs {
		if rec.NotModified {
			r.job, r.fp, r.at = append(r.job, rec.Item.Job), append(r.fp, rec.Item.Fingerprint), append(r.at, fetchedAt(rec.Item))
		}
	}
	return r
}

// retriedKeys are the pages whose failure records go.
func retriedKeys(recs []Record) (jobs, fps []string) {
	for _, rec := range recs {
		if rec.Retried {
			jobs, fps = append(jobs, rec.Item.Job), append(fps, rec.Item.Fingerprint)
		}
	}
	return jobs, fps
}

// fetchedAt is when the item's page was fetched (now when unknown).
func fetchedAt(it store.Item) time.Time {
	if it.FetchedAt.IsZero() {
		return time.Now().UTC()
	}
	return it.FetchedAt
}

// PutFailure upserts f into the failures table.
func (p *Postgres) PutFailure(ctx context.Context, f store.Failure) error {
	_, err := p.pool.Exec(ctx, fmt.Sprintf(upsertFailure, p.failed), f.Job, f.Fingerprint(), f.URL, f.Kind, f.PageKind,
		f.Reason, f.Status, f.Attempts, f.Transient, f.FailedAt)
	if err != nil {
		return classify(fmt.Errorf("record failure of %s: %w", f.URL, err))
	}
	return nil
}

// classify marks an error the server gave for the data itself (SQLSTATE
// classes 22, data exception, and 23, integrity constraint; 54, a value
// past a limit) as ErrRefused; the rest (connections, the server going
// away, locks) are worth trying again.
func classify(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && len(pe.Code) == 5 {
		switch pe.Code[:2] {
		case "22", "23", "54":
			return fmt.Errorf("%w: %w", err, ErrRefused)
		}
	}
	return err
}
