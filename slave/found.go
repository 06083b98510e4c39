package slave

import (
	"context"
	"fmt"

	"github.com/crawler-dev/crawler/ledger"
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

// extractFailed settles an item page that yields no item (cause says
// why). The links it holds (found, "" for none: a page that lacks a
// required field still has them) go to the job's Found list first, as a
// stored item's do, so they are followed whatever the item's fate; if
// they cannot be sent, the task is let go and delivered again.
func (s *Slave) extractFailed(ctx context.Context, w *work, cause error, found string, tries int) {
	if found != "" {
		if err := s.deps.Redis.RPush(ctx, w.job.keys.Found(), found).Err(); err != nil {
			s.letGo(ctx, w, fmt.Errorf("send the links found on a page without an item: %w", err))
			return
		}
	}
	s.settle(ctx, w, s.extractFailure(w, cause, tries), ledger.Outcome{Failed: true})
}
