package slave

import (
	"context"
	"fmt"
)

// sendFound puts the Found entries of the batch's stored items on their
// jobs' Found lists, in one round trip and one RPUSH a job, before the
// items' tasks are acknowledged: the job cannot finish while its master
// has links of a page left to route. An item whose entry cannot be sent
// gets that error in errs, so its task is let go and delivered again (the
// master admits the links of a page once per round however often they
// come).
func (c *committer) sendFound(ctx context.Context, batch []pendingItem, errs []error) {
	var sent []int
	var lists []string
	entries := map[string][]any{}
	for i, p := range batch {
		if errs[i] == nil && p.found != "" {
			key := p.w.job.keys.Found()
			if entries[key] == nil {
				lists = append(lists, key)
			}
			entries[key] = append(entries[key], p.found)
			sent = append(sent, i)
		}
	}
	if len(sent) == 0 {
		return
	}
	pipe := c.s.deps.Redis.Pipeline()
	for _, key := range lists {
		pipe.RPush(ctx, key, entries[key]...)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		for _, i := range sent {
			errs[i] = fmt.Errorf("send the links found: %w", err)
		}
	}
}
