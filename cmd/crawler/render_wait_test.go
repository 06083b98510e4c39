package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/client"
)

// TestCluster_RenderWaitsForRenderer: the only slave has no browser
// (--browser names a path that does not exist), so the tasks of the job's
// rendered kind wait, counted as waiting for a renderer with a warning
// saying why, none failed; once a slave with a browser joins, every one is
// routed to it and stored, and the counters close.
func TestCluster_RenderWaitsForRenderer(t *testing.T) {
	const products = 6
	env := newClusterEnv(t)
	shop := newGatedShop(t, products, 1)
	close(shop.open)
	job := writeSPAJob(t, shop.URL, "", "")
	env.startMaster(t, "master")
	env.slaveArgs = []string{"--browser", filepath.Join(t.TempDir(), "no-such-chromium")}
	blind := env.startSlave(t, 0)
	env.waitSlaves(t, 0)
	env.submit(t, "spa", job)

	env.waitProgress(t, "spa", fmt.Sprintf("%d tasks waiting for a renderer", products), func(c client.Counters) bool {
		return c.WaitingForRenderer == products
	})
	st, err := jobStatus(context.Background(), env.rdb, env.keys, "spa")
	if err != nil {
		t.Fatal(err)
	}
	if c := st.Counters; c.Stored+c.Failed+c.Queued+c.InFlight != 0 || st.State != "running" {
		t.Errorf("while no slave can render: state %s, counters %+v; want running, nothing stored, failed or queued", st.State, c)
	}
	if !strings.Contains(strings.Join(st.Warnings, "\n"), "wait for a slave that can render") {
		t.Errorf("warnings %q do not say why the tasks wait", st.Warnings)
	}
	out, errOut, err := crawler(t, time.Minute, append([]string{"client", "status", "--job", "spa"}, env.flags()...)...)
	if err != nil || !strings.Contains(out, fmt.Sprintf("waiting for a slave that can render %d ", products)) ||
		!strings.Contains(out, "warning: ") {
		t.Errorf("client status: %v %s\n%s; want the tasks waiting for a renderer, and why", err, errOut, out)
	}
	if log := blind.out.String(); !strings.Contains(log, "no browser: this slave renders no pages") {
		t.Errorf("the slave without a browser does not say so:\n%s", tail(log, 4000))
	}

	env.slaveArgs = nil // chromium from PATH
	env.startSlave(t, 1)
	st2 := env.wait(t, "spa", 4*time.Minute)
	c := st2.Counters
	if c.Stored != products || c.Failed != 0 || c.WaitingForRenderer != 0 || c.Settled() != c.Discovered {
		t.Errorf("counters %+v; want %d stored, none failed or waiting, settled = discovered", c, products)
	}
	if s := st2.Slaves["1"]; s.Stored != products {
		t.Errorf("slave 1 (the renderer) stored %d, want %d (slaves %+v)", s.Stored, products, st2.Slaves)
	}
	got := map[string]string{}
	for _, it := range env.results(t, "spa") {
		got[strings.TrimPrefix(it.URL, shop.URL)] = fmt.Sprint(it.Fields["title"])
	}
	for i := 1; i <= products; i++ {
		if want := fmt.Sprintf("Lamp %d", i); got[fmt.Sprintf("/p/%d", i)] != want {
			t.Errorf("/p/%d stored as %q, want %q", i, got[fmt.Sprintf("/p/%d", i)], want)
		}
	}
}
