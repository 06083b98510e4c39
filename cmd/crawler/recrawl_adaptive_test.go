package main

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/crawler-dev/crawler/internal/shopsite"
)

// TestRecrawl_Adaptive (issue 34): real master and slave processes crawl
// a shop of 60 products in rounds under an adaptive re-crawl; 3 products
// change every round, the others never. Every round routes every product
// and each ends checked or skipped as not due; the changing products are
// checked, and found changed, in every round; the others are checked less
// and less often, so the site answers fewer requests than checking every
// product every round would cost.
func TestRecrawl_Adaptive(t *testing.T) {
	t.Parallel()
	const pages, rounds = 60, 6
	churn := []int{0, 20, 40}
	site := shopsite.New(pages, true, 0)
	site.ChangeEachRound(churn...)
	srv := httptest.NewServer(site)
	t.Cleanup(srv.Close)
	env := newClusterEnv(t)
	env.startCluster(t, 2)
	job := fmt.Sprintf(`name: shop
seeds: ["%s/list"]
allow_private_networks: true
detail_link: {css: "a.p"}
fields: {title: {css: "h1", required: true}}
recrawl_every: 2s
recrawl: {mode: adaptive, min: 2s, max: 1h}
per_host_rps: 1000
per_host_concurrency: 32
`, srv.URL)
	path := filepath.Join(t.TempDir(), "shop.yaml")
	if err := os.WriteFile(path, []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	env.submit(t, "shop", path)
	st := waitRound(t, env, rounds)

	var notDue int64
	for r := 1; r <= rounds; r++ {
		c := st.Rounds[strconv.Itoa(r)]
		checked := c.New + c.Changed + c.Unchanged + c.NotModified
		if checked+c.SkippedNotDue != pages {
			t.Errorf("round %d: %+v: checked %d + not due %d, want all %d products", r, c, checked, c.SkippedNotDue, pages)
		}
		if r > 1 && c.Changed != int64(len(churn)) {
			t.Errorf("round %d found %d products changed, want the %d that change every round", r, c.Changed, len(churn))
		}
		notDue += c.SkippedNotDue
	}
	if notDue == 0 {
		t.Error("no product was left unchecked as not due: every round checked everything")
	}
	requests := site.Full() + site.NotModified()
	if requests != pages*rounds-notDue {
		t.Errorf("the site answered %d product requests, want %d checked", requests, pages*rounds-notDue)
	}
	t.Logf("%d rounds: %d product requests of %d checking everything; %d not due", rounds, requests, pages*rounds, notDue)
	for _, it := range env.results(t, "shop") {
		for _, id := range churn {
			if it.URL == fmt.Sprintf("%s/p/%d", srv.URL, id) && it.Version < int64(rounds) { // the next round may have begun
				t.Errorf("%s: version %d, want %d (a change a round, each caught)", it.URL, it.Version, rounds)
			}
		}
	}
	checkSettled(t, st.Counters)
}
