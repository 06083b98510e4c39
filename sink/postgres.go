package sink

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"
)

// DefaultTable is the PostgreSQL table items go to unless ?table= names
// another; failures go to "<table>_failed".
const DefaultTable = "items"

// Postgres upserts one row per item into a table, keyed on (job,
// fingerprint), and failures into "<table>_failed".
type Postgres struct {
	pool   *pgxpool.Pool
	table  string // quoted
	failed string // quoted
	log    *zap.Logger
}

// tableName is what ?table= may be: a lowercase SQL identifier, optionally
// qualified by its schema.
var tableName = regexp.MustCompile(`^([a-z_][a-z0-9_]*\.)?[a-z_][a-z0-9_]*$`)

// openPostgres connects to s (a postgres:// URI; ?table= names the
// table), creates the tables when missing and checks their columns.
func openPostgres(ctx context.Context, s Spec, log *zap.Logger) (Sink, error) {
	table, connURI, err := splitTable(s)
	if err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(connURI)
	if err != nil {
		return nil, redacted(fmt.Errorf("malformed postgres URI: %w", err), s.raw)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, redacted(fmt.Errorf("connect: %w", err), s.raw)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, redacted(fmt.Errorf("connect: %w", err), s.raw)
	}
	p := &Postgres{pool: pool, table: quoteName(table), failed: quoteName(table + "_failed"), log: log}
	if err := p.prepare(ctx, table); err != nil {
		pool.Close()
		return nil, err
	}
	return p, nil
}

// checkPostgres checks a postgres:// URI's table name.
func checkPostgres(s Spec) error {
	_, _, err := splitTable(s)
	return err
}

// splitTable takes ?table= out of the URI (the server would read it as a
// setting) and checks it.
func splitTable(s Spec) (table, connURI string, err error) {
	u := *s.URL
	q := u.Query()
	table = DefaultTable
	if t, ok := q["table"]; ok {
		table = t[0]
		q.Del("table")
	}
	if len(table) > 50 || !tableName.MatchString(table) {
		return "", "", fmt.Errorf("?table=%q: not a table name (lowercase letters, digits and _, optionally schema.table, at most 50 characters)", table)
	}
	u.RawQuery = q.Encode()
	return table, u.String(), nil
}

// quoteName quotes a table name, schema.table as two identifiers.
func quoteName(name string) string {
	return pgx.Identifier(strings.Split(name, ".")).Sanitize()
}

// prepare creates the items and failures tables when missing, checks that
// their columns are the ones written, and that the role may write them.
func (p *Postgres) prepare(ctx context.Context, table string) error {
	for _, t := range []struct {
		name string
		cols []column
		ddl  string
	}{
		{table, itemColumns, itemsDDL},
		{table + "_failed", failureColumns, failedDDL},
	} {
		if err := p.ensureTable(ctx, t.name, t.ddl); err != nil {
			return err
		}
		if err := p.checkColumns(ctx, t.name, t.cols); err != nil {
			return err
		}
		if err := p.checkPrivileges(ctx, t.name); err != nil {
			return err
		}
	}
	return nil
}

// ensureTable creates the table and its indexes when the table is
// missing; a role without the right to gets an error that says so.
// Slaves starting together create it once: the check and the creation
// hold a lock on the table's name.
func (p *Postgres) ensureTable(ctx context.Context, name, ddl string) error {
	tx, err := p.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("create table %s: %w", name, err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	quoted := quoteName(name)
	var exists bool
	err = tx.QueryRow(ctx, `SELECT pg_advisory_xact_lock(hashtext($1)), to_regclass($1) IS NOT NULL`, quoted).Scan(nil, &exists)
	if err != nil {
		return fmt.Errorf("look up table %s: %w", name, err)
	}
	if exists {
		return nil
	}
	// An index lives in its table's schema: its name is not qualified.
	index := pgx.Identifier{name[strings.LastIndex(name, ".")+1:] + "_job_time"}.Sanitize()
	_, err = tx.Exec(ctx, fmt.Sprintf(ddl, quoted, index, quoted))
	if err == nil {
		err = tx.Commit(ctx)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42501" {
		return fmt.Errorf("table %s is missing and this role may not create it (%s): grant it CREATE on the schema, or create the table as docs/sinks.md shows", name, pe.Message)
	}
	if err != nil {
		return fmt.Errorf("create table %s: %w", name, err)
	}
	p.log.Info("created table", zap.String("table", name))
	return nil
}

// itemsDDL creates the items table (%[1]s) and its index (%[2]s).
const itemsDDL = `CREATE TABLE IF NOT EXISTS %[1]s (
	job text NOT NULL,
	fingerprint text NOT NULL,
	url text NOT NULL,
	kind text NOT NULL DEFAULT '',
	status integer NOT NULL DEFAULT 0,
	fields jsonb NOT NULL,
	content_hash text NOT NULL DEFAULT '',
	version bigint NOT NULL,
	first_seen_at timestamptz NOT NULL,
	changed_at timestamptz NOT NULL,
	fetched_at timestamptz NOT NULL,
	PRIMARY KEY (job, fingerprint)
);
CREATE INDEX IF NOT EXISTS %[2]s ON %[3]s (job, changed_at)`

// failedDDL creates the failures table (%[1]s) and its index (%[2]s).
const failedDDL = `CREATE TABLE IF NOT EXISTS %[1]s (
	job text NOT NULL,
	fingerprint text NOT NULL,
	url text NOT NULL,
	kind text NOT NULL,
	page_kind text NOT NULL DEFAULT '',
	reason text NOT NULL,
	status integer NOT NULL DEFAULT 0,
	attempts integer NOT NULL DEFAULT 0,
	transient boolean NOT NULL DEFAULT false,
	failed_at timestamptz NOT NULL,
	PRIMARY KEY (job, fingerprint)
);
CREATE INDEX IF NOT EXISTS %[2]s ON %[3]s (job, failed_at)`

// column is a column the sink writes, with its type as information_schema
// names it.
type column struct{ name, typ string }

var itemColumns = []column{
	{"job", "text"}, {"fingerprint", "text"}, {"url", "text"}, {"kind", "text"}, {"status", "integer"},
	{"fields", "jsonb"}, {"content_hash", "text"}, {"version", "bigint"},
	{"first_seen_at", "timestamp with time zone"}, {"changed_at", "timestamp with time zone"},
	{"fetched_at", "timestamp with time zone"},
}

var failureColumns = []column{
	{"job", "text"}, {"fingerprint", "text"}, {"url", "text"}, {"kind", "text"}, {"page_kind", "text"},
	{"reason", "text"}, {"status", "integer"}, {"attempts", "integer"}, {"transient", "boolean"},
	{"failed_at", "timestamp with time zone"},
}

// checkColumns says which column of an existing table is missing or of
// another type than the sink writes. Other columns may be there.
func (p *Postgres) checkColumns(ctx context.Context, name string, want []column) error {
	rows, err := p.pool.Query(ctx, `SELECT a.attname, format_type(a.atttypid, NULL) FROM pg_attribute a
		WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped`, quoteName(name))
	if err != nil {
		return fmt.Errorf("read the columns of %s: %w", name, err)
	}
	have := map[string]string{}
	var col, typ string
	if _, err := pgx.ForEachRow(rows, []any{&col, &typ}, func() error { have[col] = typ; return nil }); err != nil {
		return fmt.Errorf("read the columns of %s: %w", name, err)
	}
	var wrong []string
	for _, c := range want {
		switch got, ok := have[c.name]; {
		case !ok:
			wrong = append(wrong, fmt.Sprintf("%s %s is missing", c.name, c.typ))
		case got != c.typ:
			wrong = append(wrong, fmt.Sprintf("%s is %s, not %s", c.name, got, c.typ))
		}
	}
	if len(wrong) > 0 {
		return fmt.Errorf("table %s has the wrong columns: %s (docs/sinks.md shows the table; use another ?table=)", name, strings.Join(wrong, "; "))
	}
	return p.checkKey(ctx, name)
}

// checkKey makes sure (job, fingerprint) is unique, as the upsert needs.
func (p *Postgres) checkKey(ctx context.Context, name string) error {
	var ok bool
	err := p.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = to_regclass($1) AND i.indisunique
		AND (SELECT array_agg(a.attname::text ORDER BY a.attname) FROM pg_attribute a
			WHERE a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)) = ARRAY['fingerprint', 'job'])`, quoteName(name)).Scan(&ok)
	if err != nil {
		return fmt.Errorf("read the keys of %s: %w", name, err)
	}
	if !ok {
		return fmt.Errorf("table %s has no unique key on (job, fingerprint): add PRIMARY KEY (job, fingerprint)", name)
	}
	return nil
}

// checkPrivileges says which right the role lacks on an existing table.
func (p *Postgres) checkPrivileges(ctx context.Context, name string) error {
	var missing []string
	for _, priv := range []string{"SELECT", "INSERT", "UPDATE", "DELETE"} {
		var ok bool
		if err := p.pool.QueryRow(ctx, `SELECT has_table_privilege(to_regclass($1), $2)`, quoteName(name), priv).Scan(&ok); err != nil {
			return fmt.Errorf("read the privileges on %s: %w", name, err)
		}
		if !ok {
			missing = append(missing, priv)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("this role lacks %s on table %s: GRANT %s ON %s TO the role",
			strings.Join(missing, ", "), name, strings.Join(missing, ", "), name)
	}
	return nil
}

// Close closes the connections.
func (p *Postgres) Close() error {
	p.pool.Close()
	return nil
}
