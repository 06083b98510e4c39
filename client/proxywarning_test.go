package client

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/jobspec"
)

// TestClient_Status_requireEmptyPool: a job that requires proxies while the
// pool holds none says why in its status, which client status and the
// status page both show; a job that does not require them says nothing.
func TestClient_Status_requireEmptyPool(t *testing.T) {
	c, rdb, keys := newTestClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	spec := testJob("proxied", "https://example.com/")
	spec.Proxy = jobspec.ProxyRequire
	if err := c.Submit(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if err := c.Submit(ctx, testJob("direct", "https://example.com/")); err != nil {
		t.Fatal(err)
	}
	st, err := c.Status(ctx, "proxied")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], "no usable proxy") {
		t.Errorf("warnings of a require job with an empty pool = %q, want why it waits", st.Warnings)
	}
	if st, err := c.Status(ctx, "direct"); err != nil || len(st.Warnings) != 0 {
		t.Errorf("warnings of a job without proxies = %q, %v; want none", st.Warnings, err)
	}
	rdb.HSet(ctx, keys.Job("proxied").State(), cluster.StateField, cluster.StateFinished)
	if st, err := c.Status(ctx, "proxied"); err != nil || len(st.Warnings) != 0 {
		t.Errorf("warnings of a finished require job = %q, %v; want none: it waits for nothing", st.Warnings, err)
	}
}
