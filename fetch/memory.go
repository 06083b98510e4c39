package fetch

import (
	"context"
	"io"
	"sync"

	"golang.org/x/sync/semaphore"
)

// PageCost is how many times its size a page costs while a crawler holds
// it: the body, the decoded copy, and the document parsed from it.
const PageCost = 6

// firstCharge is the size charged before a body of unknown length is read;
// it grows as the body does.
const firstCharge = 128 << 10

// memoryBudget bounds the memory of the pages a Fetcher has handed out and
// not yet had back. A fetch charges its page before reading it and keeps
// the charge until Page.Release. Nobody waits while holding a charge (a
// body that outgrows its charge and finds no room gives its charge back
// before it waits for its largest possible size), so holders always move
// on and release: the budget cannot deadlock.
type memoryBudget struct {
	sem   *semaphore.Weighted
	total int64
}

func newMemoryBudget(total int64) *memoryBudget {
	if total <= 0 {
		return nil
	}
	return &memoryBudget{sem: semaphore.NewWeighted(total), total: total}
}

// charge is a page's hold on the budget.
type charge struct {
	b    *memoryBudget
	held int64
	once sync.Once
}

// acquire waits for room for n bytes of page (times PageCost), at most the
// whole budget.
func (b *memoryBudget) acquire(ctx context.Context, n int64) (*charge, error) {
	if b == nil {
		return nil, nil
	}
	c := &charge{b: b}
	return c, c.waitFor(ctx, n)
}

func (c *charge) waitFor(ctx context.Context, n int64) error {
	want := min(n*PageCost, c.b.total)
	if err := c.b.sem.Acquire(ctx, want); err != nil {
		return err
	}
	c.held = want
	return nil
}

// grow makes the charge cover a body of n bytes: at once if there is room,
// else by giving its charge back and waiting for the largest body the
// request may have (limit), so that nobody waits while holding memory.
func (c *charge) grow(ctx context.Context, n, limit int64) error {
	if c == nil || n*PageCost <= c.held || c.held == c.b.total {
		return nil
	}
	extra := min(max(n*PageCost, 2*c.held), c.b.total) - c.held
	if c.b.sem.TryAcquire(extra) {
		c.held += extra
		return nil
	}
	c.b.sem.Release(c.held)
	c.held = 0
	return c.waitFor(ctx, limit)
}

// release gives the charge back, once.
func (c *charge) release() {
	if c == nil {
		return
	}
	c.once.Do(func() {
		if c.held > 0 {
			c.b.sem.Release(c.held)
		}
	})
}

// chargedReader grows its charge as the body comes in.
type chargedReader struct {
	ctx   context.Context
	r     io.Reader
	c     *charge
	n     int64
	limit int64
}

func (r *chargedReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.n += int64(n)
	if gerr := r.c.grow(r.ctx, r.n, r.limit); gerr != nil {
		return n, gerr
	}
	return n, err
}
