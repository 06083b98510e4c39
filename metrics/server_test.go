package metrics

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
)

// TestServe_stops checks that the server stops when its context ends or on
// Close, and is no longer listening afterwards.
func TestServe_stops(t *testing.T) {
	r := newRegistry(t, DefaultOptions())
	t.Run("context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		s, err := Serve(ctx, "127.0.0.1:0", r)
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
		if status, _, _ := get(t, "http://"+s.Addr()+"/healthz"); status != 200 {
			t.Fatalf("healthz: %d", status)
		}
		cancel()
		if err := s.Wait(); err != nil {
			t.Fatalf("Wait: %v", err)
		}
		assertClosed(t, s.Addr())
	})
	t.Run("close", func(t *testing.T) {
		s, err := Serve(context.Background(), "127.0.0.1:0", r)
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		assertClosed(t, s.Addr())
	})
}

func assertClosed(t *testing.T, addr string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err == nil {
		conn.Close()
		t.Errorf("%s still accepts connections after the server stopped", addr)
	}
}

func TestServe_errors(t *testing.T) {
	r := newRegistry(t, DefaultOptions())
	ctx := context.Background()
	if _, err := Serve(ctx, "127.0.0.1:0", nil); err == nil {
		t.Error("Serve accepted a nil registry")
	}
	var fe *cluster.FieldError
	if _, err := Serve(ctx, "localhost", r); !errors.As(err, &fe) || fe.Field != "Addr" {
		t.Errorf("Serve(no port) = %v, want a FieldError for Addr", err)
	}
	s, err := Serve(ctx, "127.0.0.1:0", r)
	if err != nil {
		t.Fatalf("Serve: %v", err)
	}
	defer s.Close()
	if _, err := Serve(ctx, s.Addr(), r); err == nil {
		t.Errorf("Serve on %s, already in use, succeeded", s.Addr())
	}
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestServe_profiles: the runtime's profiles are served only when asked
// for (WithProfiles), so a metrics port does not expose them by default.
func TestServe_profiles(t *testing.T) {
	r := newRegistry(t, DefaultOptions())
	for _, tc := range []struct {
		name string
		opts []ServeOption
		want int
	}{{"default", nil, 404}, {"with profiles", []ServeOption{WithProfiles()}, 200}} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Serve(context.Background(), "127.0.0.1:0", r, tc.opts...)
			if err != nil {
				t.Fatalf("Serve: %v", err)
			}
			defer s.Close()
			for _, path := range []string{"/debug/pprof/", "/debug/pprof/goroutine?debug=1"} {
				if status, _, _ := get(t, "http://"+s.Addr()+path); status != tc.want {
					t.Errorf("GET %s = %d, want %d", path, status, tc.want)
				}
			}
		})
	}
}
