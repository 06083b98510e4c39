package testenv

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PostgresURI is the test PostgreSQL, from CRAWLER_TEST_POSTGRES
// (default postgres://postgres@127.0.0.1:5432/test, as on the development
// and CI machines: .ci/run starts one there).
func PostgresURI() string {
	if u := os.Getenv("CRAWLER_TEST_POSTGRES"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
}

// Postgres connects to the test PostgreSQL and returns a table name of
// this test's own (both it and "<name>_failed" are dropped when the test
// ends) and a pool to look into it. It fails the test when no PostgreSQL
// answers.
func Postgres(t testing.TB) (*pgxpool.Pool, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, PostgresURI())
	if err == nil {
		err = pool.Ping(ctx)
	}
	if err != nil {
		t.Fatalf("testenv: no PostgreSQL at %s (set CRAWLER_TEST_POSTGRES): %v", PostgresURI(), err)
	}
	table := strings.ReplaceAll(UniquePrefix(t), "-", "_") // t_<name>_<8 hex>
	if len(table) > 40 {
		table = table[:31] + table[len(table)-9:]
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, name := range []string{table, table + "_failed"} {
			if _, err := pool.Exec(ctx, "DROP TABLE IF EXISTS "+pgx.Identifier{name}.Sanitize()); err != nil {
				t.Errorf("drop table %s: %v", name, err)
			}
		}
		pool.Close()
	})
	return pool, table
}

// PostgresSink is the --sink URI of the test PostgreSQL writing to table.
func PostgresSink(table string) string {
	sep := "?"
	if strings.Contains(PostgresURI(), "?") {
		sep = "&"
	}
	return PostgresURI() + sep + "table=" + table
}
