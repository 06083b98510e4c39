package dedup

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
)

// movedStep is one check of a batch once the clock is at ms after the
// first granule's start (bloom) or the first admission (exact, set).
type movedStep struct {
	ms  int64
	new bool
}

// TestFilter_windowOnAMovedClock: a URL seen is a duplicate while it is
// inside the window, and new again once it has left it: in bloom mode when
// its time slice expires, a window plus one granule after the granule it
// was seen in; in exact mode a window after it was seen; never in set
// mode. The server's clock is moved, not waited for (TestFilter_Expiry is
// the bloom case on the real Redis's clock).
func TestFilter_windowOnAMovedClock(t *testing.T) {
	for _, tc := range []struct {
		mode  Mode
		steps []movedStep
	}{
		{ModeBloom, []movedStep{{500, false}, {2000, false}, {2999, false}, {3050, true}, {3100, false}}},
		{ModeExact, []movedStep{{500, false}, {1999, false}, {2000, true}, {2050, false}, {3999, false}, {4000, true}}},
		{ModeSet, []movedStep{{500, false}, {3050, false}, {int64(time.Hour / time.Millisecond), false}}},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			var clock *testenv.Clock
			moved := backend{"moved", func(tb testing.TB) (rdbc *redis.Client, ks cluster.Keys) {
				rdbc, ks, clock = testenv.MovedRedis(tb)
				return rdbc, ks
			}}
			f, rdb, _ := newTestFilter(t, moved, tc.mode, func(o *Options) {
				o.Window, o.Granularity, o.Capacity = 2*time.Second, time.Second, 1000
			})
			fps := testFPs("moved", 10)
			mustSeen(t, f, fps, true)
			origin := clock.Now().UnixMilli()
			if tc.mode == ModeBloom {
				origin -= origin % 1000
			}
			for _, step := range tc.steps {
				clock.Advance(time.UnixMilli(origin + step.ms).Sub(clock.Now()))
				t.Logf("at +%d ms", step.ms)
				mustSeen(t, f, fps, step.new)
			}
			if n := rdb.DBSize(context.Background()).Val(); n == 0 {
				t.Errorf("no keys left: the fingerprints seen last are not recorded")
			}
		})
	}
}
