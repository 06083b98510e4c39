package dedup

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
)

func assertList(t *testing.T, rdb *redis.Client, key string, want ...string) {
	t.Helper()
	got, err := rdb.LRange(context.Background(), key, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("list %s = %v, want %v", key, got, want)
	}
}

func assertHash(t *testing.T, rdb *redis.Client, key string, want map[string]string) {
	t.Helper()
	got, err := rdb.HGetAll(context.Background(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("hash %s[%s] = %q, want %q (all: %v)", key, k, got[k], v, got)
		}
	}
}
