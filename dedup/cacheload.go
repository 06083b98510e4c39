package dedup

import (
	"context"
	"fmt"
	"time"
)

// prepareLoadBytes bounds the slices one Prepare reads into the cache, so
// that a master's first ticks each take a share of a large window instead
// of one long stall.
const prepareLoadBytes = 64 << 20

// prepare is Prepare with a cache: it runs the prepare script (creating
// the keys ahead unless CreateOnWrite, and claiming the current slice when the
// filter holds no exact copy of it), reads the claimed slice, drops the
// copies that left the window and reads the slices sealed since.
func (c *sliceCache) prepare(ctx context.Context, f *Filter) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	nowMs, guess := f.now()
	fresh := c.claimable(nowMs, guess)
	res, _, err := f.run(ctx, f.scripts.prepare, func(nowMs, guess int64) plan {
		return c.mode.preparePlan(nowMs, guess, !f.opts.CreateOnWrite, fresh != nil)
	})
	if err != nil {
		c.unpublish(fresh)
		return redisErr("dedup prepare", err)
	}
	now, err := parsePrepare(res)
	if err != nil {
		c.unpublish(fresh)
		return err
	}
	if err := c.own(ctx, f, fresh, now); err != nil {
		return err
	}
	return c.loadSealed(ctx, f, now)
}

func parsePrepare(res any) (now int64, err error) {
	arr, ok := res.([]any)
	if !ok || len(arr) != 2 {
		return 0, fmt.Errorf("dedup prepare: unexpected reply %v", res)
	}
	now, _ = arr[0].(int64)
	return now, nil
}

// claimable returns the copy of the current slice (by the filter's clock)
// to claim and read, published already so that every write confirmed from
// now on reaches it; nil when the filter owns it already, has no room for
// it, backs off after losing a claim, or is too near a granule's edge to
// know which slice is current.
func (c *sliceCache) claimable(nowMs, guess int64) *image {
	r := c.resolve(nowMs, guess)
	c.claimMu.Lock()
	wait := time.Now().Before(c.nextClaim)
	c.claimMu.Unlock()
	if !r.active() || r.current != nil || wait {
		return nil
	}
	s := c.mode.shape
	v := c.view.Load()
	im := v.live[r.ggo]
	if im != nil {
		return im // not owned: read it again on top of what it holds
	}
	if v.bytesFrom(r.ggo-s.lookback)+int64(s.blocks)*int64(s.blockBytes()) > c.budget {
		return nil // copies that left the window are dropped after the claim: not counted
	}
	im = newImage(s, r.ggo, true)
	c.publish(func(v *cacheView) { v.live[im.granule] = im })
	return im
}

// unpublish drops im, a copy whose claim failed.
func (c *sliceCache) unpublish(im *image) {
	if im == nil {
		return
	}
	c.publish(func(v *cacheView) {
		if v.live[im.granule] == im {
			delete(v.live, im.granule)
		}
	})
}

// own reads the claimed slice into im and marks it owned; the script
// claimed the slice of the server's clock now, which may not be im's.
// Writes before the claim are in what it reads; writes after it by this
// filter are added as Redis confirms them; anyone else's delete the claim.
func (c *sliceCache) own(ctx context.Context, f *Filter, im *image, now int64) error {
	if im == nil {
		return nil
	}
	s := c.mode.shape
	if im.granule != s.granule(now) {
		c.unpublish(im)
		return nil
	}
	if err := im.load(ctx, f.rdb, c.mode.keys.blocks(im.granule, s.blocks), s.blockBytes()); err != nil {
		c.unpublish(im)
		return err
	}
	c.claimMu.Lock()
	im.claimedAt = time.Now()
	c.claimMu.Unlock()
	im.owned.Store(true)
	return nil
}

// loadSealed drops the copies that are no longer useful at the server's
// time now, then reads sealed slices, newest first, while the budget
// allows and up to prepareLoadBytes.
func (c *sliceCache) loadSealed(ctx context.Context, f *Filter, now int64) error {
	s := c.mode.shape
	g := s.granule(now)
	c.publish(func(v *cacheView) { c.evict(v, g, now) })
	full := int64(s.blocks) * int64(s.blockBytes())
	var read int64
	for old := g - 1; old >= g-s.lookback && read < prepareLoadBytes; old-- {
		v := c.view.Load()
		if !c.sealed(old, now) || v.sealed[old] != nil {
			continue
		}
		if v.bytes()+full > c.budget {
			return nil
		}
		im := newImage(s, old, false)
		if err := im.load(ctx, f.rdb, c.mode.keys.blocks(old, s.blocks), s.blockBytes()); err != nil {
			return err
		}
		c.publish(func(v *cacheView) { v.sealed[old] = im })
		read += full
	}
	return nil
}

// evict removes from v the copies of granules outside the window of
// granule g, the live copy of a slice that is sealed at now (it is read
// again from Redis, where every write has landed), and sealed copies the
// clock says are not sealed after all (a clock that stepped back).
func (c *sliceCache) evict(v *cacheView, g, now int64) {
	for s := range v.sealed {
		if s < g-c.mode.shape.lookback || s >= g || !c.sealed(s, now) {
			delete(v.sealed, s)
		}
	}
	for s := range v.live {
		if s > g || s < g-1 || s == g-1 && c.sealed(s, now) {
			delete(v.live, s)
		}
	}
}
