package queue

import (
	"context"

	"github.com/crawler-dev/crawler/ledger"
)

// Ack acknowledges outcomes of tasks s delivered, as a slave does: the
// job's ledger counts them (ledger.Ledger.Ack). The tests of delivery
// counting acknowledge through it.
func (s *SlaveQueue) Ack(ctx context.Context, outcomes []ledger.Outcome) (int, error) {
	return ledger.New(s.rdb, s.keys).Ack(ctx, s.slave, outcomes)
}
