package redisserver

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestStart: a server of our own answers on its socket or port, says its
// version, and is gone, directory and all, after Close.
func TestStart(t *testing.T) {
	for _, socket := range []bool{true, false} {
		s, err := Start(context.Background(), Options{Socket: socket})
		if err != nil {
			t.Fatalf("Start (socket %v): %v", socket, err)
		}
		rdb := redis.NewClient(s.Options())
		if err := rdb.Set(context.Background(), "k", "v", 0).Err(); err != nil {
			t.Errorf("socket %v: SET: %v", socket, err)
		}
		rdb.Close()
		if s.Version() == "" {
			t.Errorf("socket %v: no version read", socket)
		}
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if _, err := os.Stat(s.dir); !os.IsNotExist(err) {
			t.Errorf("the server's directory is left behind: %v", err)
		}
	}
}

// TestStart_notInstalled: a missing executable is ErrNotInstalled, so a
// caller can fall back.
func TestStart_notInstalled(t *testing.T) {
	if _, err := Start(context.Background(), Options{Path: "no-such-redis-server"}); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("Start with no executable = %v, want ErrNotInstalled", err)
	}
}
