package slave

import (
	"context"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/store"
)

// A task whose fetch began more than MaxDeliveries times without an
// outcome is dead-lettered, unless one of those deliveries got as far as
// writing its page: then its holders died between the store write and the
// acknowledgement (kills, or a store slow enough that a holder was killed
// while it wrote, the write landing after it died), which says nothing
// against the page. Dead-lettering it then would leave the page both
// stored and failed, and the links it found perhaps never sent; instead it
// is fetched again, up to storedGrace times MaxDeliveries deliveries in
// all, after which it is settled without a fetch: counted stored, as the
// store holds it.
const storedGrace = 2

// lookUpStored asks the store, for the redelivered tasks of works (an
// earlier delivery began and did not acknowledge them), whether a delivery
// of their round stored their page, and marks those storedEarlier: such a
// task is counted stored however its last delivery ends (settle), since
// that is what the store holds. One query for the lot, and only for
// redeliveries, which are rare; with the store away they are settled by
// their own outcome, as before.
func (s *Slave) lookUpStored(ctx context.Context, j *job, works []*work) {
	found, _ := s.readStored(ctx, j, works, "look up redelivered pages; settling them by their own outcome",
		func(w *work) bool { return w.deliveries > 1 })
	for _, f := range found {
		if f.stored != nil && f.stored.Round == f.w.task.Round {
			f.w.storedEarlier, f.w.earlierChange = true, earlierChange(f.stored, f.w.task.Round)
			if f.w.deliveries > s.opts.MaxDeliveries {
				s.log.Info("page stored by an earlier delivery whose holder died before acknowledging it; not dead-lettered",
					zap.String("job", j.name), zap.String("url", f.w.task.URL), zap.Int("deliveries", f.w.deliveries))
			}
		}
	}
}

// deadLetter says whether w is past its deliveries (see storedGrace). A
// stored page past them is settled as stored without a fetch.
func (s *Slave) deadLetter(w *work) bool {
	return w.deliveries > s.opts.MaxDeliveries && !(w.storedEarlier && w.deliveries <= storedGrace*s.opts.MaxDeliveries)
}

// earlierChange is what the visit of round that stored p found (as
// store.SaveVisits reports a page delivered again in that round): new or
// changed when that round wrote its version, else unchanged.
func earlierChange(p *store.Stored, round int64) store.Change {
	switch {
	case p.ChangedRound == round && p.Version == 1:
		return store.ChangeNew
	case p.ChangedRound == round && p.Version > 1:
		return store.ChangeChanged
	}
	return store.ChangeUnchanged
}
