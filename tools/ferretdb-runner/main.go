// Command ferretdb-runner starts an embedded FerretDB (a MongoDB wire-protocol
// server) for the crawler's tests and local development. It lives in its own
// module so the crawler's main module does not carry FerretDB's dependencies.
//
// Usage:
//
//	ferretdb-runner -listen 127.0.0.1:27017 -handler sqlite -dir /tmp/ferret
//	ferretdb-runner -handler postgresql -postgresql-url postgres://127.0.0.1:5432/ferretdb
//
// It prints the MongoDB URI on stdout once it accepts connections and runs
// until SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:27017", "TCP address to listen on (loopback by default)")
	handler := flag.String("handler", "sqlite", "backend handler: sqlite or postgresql")
	dir := flag.String("dir", filepath.Join(os.TempDir(), "crawler-ferretdb"), "data directory for the sqlite handler")
	pgURL := flag.String("postgresql-url", "postgres://127.0.0.1:5432/ferretdb", "PostgreSQL URL for the postgresql handler")
	flag.Parse()

	if err := run(*listen, *handler, *dir, *pgURL); err != nil {
		log.Fatalf("ferretdb-runner: %v", err)
	}
}

func run(listen, handler, dir, pgURL string) error {
	cfg := &ferretdb.Config{
		Listener: ferretdb.ListenerConfig{TCP: listen},
		Handler:  handler,
		// Per-connection INFO lines would drown the test output.
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	switch handler {
	case "sqlite":
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create sqlite dir: %w", err)
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return fmt.Errorf("sqlite dir: %w", err)
		}
		cfg.SQLiteURL = "file:" + abs + "/"
	case "postgresql":
		cfg.PostgreSQLURL = pgURL
	default:
		return fmt.Errorf("unknown -handler %q (want sqlite or postgresql)", handler)
	}

	f, err := ferretdb.New(cfg)
	if err != nil {
		return fmt.Errorf("new ferretdb: %w", err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()

	if err := waitListening(listen, 30*time.Second, done); err != nil {
		return err
	}
	fmt.Println(f.MongoDBURI())

	if err := <-done; err != nil && ctx.Err() == nil {
		return fmt.Errorf("ferretdb run: %w", err)
	}
	return nil
}

// waitListening polls the listen address until it accepts a connection.
func waitListening(addr string, timeout time.Duration, done <-chan error) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			return fmt.Errorf("ferretdb stopped before listening: %v", err)
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("ferretdb did not listen on %s within %s", addr, timeout)
}
