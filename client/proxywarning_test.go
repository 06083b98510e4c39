package client

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
)

// TestGetStatus_requireEmptyPool: a job that requires proxies while the
// pool holds none says why in its status, which client status and the
// status page both show; a job that does not require them says nothing.
func TestGetStatus_requireEmptyPool(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	spec := testJob("proxied", "https://example.com/")
	spec.Proxy = cluster.ProxyRequire
	if err := Submit(ctx, rdb, keys, spec); err != nil {
		t.Fatal(err)
	}
	if err := Submit(ctx, rdb, keys, testJob("direct", "https://example.com/")); err != nil {
		t.Fatal(err)
	}
	st, err := GetStatus(ctx, rdb, keys, "proxied", cluster.DefaultMaxSlaves)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], "no usable proxy") {
		t.Errorf("warnings of a require job with an empty pool = %q, want why it waits", st.Warnings)
	}
	if st, err := GetStatus(ctx, rdb, keys, "direct", cluster.DefaultMaxSlaves); err != nil || len(st.Warnings) != 0 {
		t.Errorf("warnings of a job without proxies = %q, %v; want none", st.Warnings, err)
	}
}
