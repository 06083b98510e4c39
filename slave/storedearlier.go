package slave

import (
	"context"

	"go.uber.org/zap"
)

// A task whose fetch began more than MaxDeliveries times without an
// outcome is dead-lettered, unless one of those deliveries got as far as
// writing its page: then its holders died between the store write and the
// acknowledgement (kills, or a store slow enough that a holder was killed
// while it wrote, the write landing after it died), which says nothing
// against the page. Dead-lettering it then would leave the page both
// stored and failed, and the links it found perhaps never sent; instead it
// is fetched again, up to storedGrace times MaxDeliveries deliveries in
// all, after which it is dead-lettered like any other.
const storedGrace = 2

// lookUpStored asks the store, for the tasks of works about to be
// dead-lettered, whether a delivery of their round stored their page, and
// marks those storedEarlier. One query for the lot, and only for such
// tasks, which are rare; with the store away they are dead-lettered as
// before.
func (s *Slave) lookUpStored(ctx context.Context, j *job, works []*work) {
	found, _ := s.readStored(ctx, j, works, "look up pages about to be dead-lettered; dead-lettering them",
		func(w *work) bool {
			return w.deliveries > s.opts.MaxDeliveries && w.deliveries <= storedGrace*s.opts.MaxDeliveries
		})
	for _, f := range found {
		if f.stored != nil && f.stored.Round == f.w.task.Round {
			f.w.storedEarlier = true
			s.log.Info("page stored by an earlier delivery whose holder died before acknowledging it; fetching it again",
				zap.String("job", j.name), zap.String("url", f.w.task.URL), zap.Int("deliveries", f.w.deliveries))
		}
	}
}

// deadLetter says whether w is past its deliveries (see storedGrace).
func (s *Slave) deadLetter(w *work) bool {
	return w.deliveries > s.opts.MaxDeliveries && !w.storedEarlier
}
