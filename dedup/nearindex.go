package dedup

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// NearDistance is the largest Hamming distance between simhashes that
// NearIndex treats as the same content.
const NearDistance = 3

var nearScript = redis.NewScript(mustLua("nearindex"))

// NearIndex finds near-duplicate content across a job: the simhash is cut
// into 4 bands of 16 bits and each band value has one Redis SET of the ids
// that have it. Two hashes within distance 3 differ in at most 3 bands, so
// they share at least one (pigeonhole): only those SETs are compared.
type NearIndex struct {
	rdb  redis.UniversalClient
	keys keys
	ttl  time.Duration
}

// NewNearIndex returns an index whose keys live under namespace (e.g.
// cluster.Keys{}.Job("news").Simhash()) and expire ttl after the last add
// to them.
func NewNearIndex(rdb redis.UniversalClient, namespace string, ttl time.Duration) *NearIndex {
	return &NearIndex{rdb: rdb, keys: keys{ns: namespace}, ttl: ttl}
}

// FindOrAdd returns the id of an earlier entry within distance 3 of h (the
// closest, ties broken by id) and found = true; otherwise it adds id with
// h and returns found = false. Both happen in one script, so of two racing
// near-duplicates one is added and the other finds it.
func (x *NearIndex) FindOrAdd(ctx context.Context, id string, h uint64) (match string, found bool, err error) {
	bands := make([]string, 4)
	for i := range bands {
		bands[i] = x.keys.band(i, uint16(h>>(48-16*i)))
	}
	res, err := nearScript.Run(ctx, x.rdb, bands, id, fmt.Sprintf("%016x", h),
		strconv.FormatInt(max(1, x.ttl.Milliseconds()), 10), NearDistance).Slice()
	if err != nil {
		return "", false, redisErr("near index", err)
	}
	if len(res) != 2 {
		return "", false, fmt.Errorf("near index: unexpected reply %v", res)
	}
	f, _ := res[0].(int64)
	match, _ = res[1].(string)
	return match, f == 1, nil
}
