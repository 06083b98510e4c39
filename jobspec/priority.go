package jobspec

import (
	"fmt"
	"slices"
)

// Bounds of a priority (a job's, a kind's or a link rule's).
const (
	MinPriority = -100
	MaxPriority = 100
	// MaxItemPriorities is how many distinct priorities a job's item
	// pages may have: each is a list per slave (a band of its queue).
	MaxItemPriorities = 16
	// ListKindPriority is the priority of a list kind (one without item)
	// that gives none: above an item kind's default, 0.
	ListKindPriority = 1
)

// KindPriority is the priority of the pages of kind k: its own, else
// ListKindPriority for a list kind and 0 for an item kind.
func (k PageKind) KindPriority() int {
	switch {
	case k.Priority != nil:
		return *k.Priority
	case k.Item:
		return 0
	}
	return ListKindPriority
}

// LinkPriority is the priority of the pages rule l finds: the rule's own,
// else that of the kind it leads to (in kinds).
func LinkPriority(kinds map[string]PageKind, l LinkRule) int {
	if l.Priority != nil {
		return *l.Priority
	}
	k, ok := kinds[l.Kind]
	if !ok {
		return 0
	}
	return k.KindPriority()
}

// ItemPriorities are the distinct priorities the job's item pages may
// have, highest first, 0 always among them: those of its item kinds and
// of the link rules that lead to them. A job whose item pages all have
// priority 0 gives [0].
func (s *Job) ItemPriorities() []int {
	kinds := s.PageKinds()
	out := []int{0}
	add := func(p int) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, name := range sortedKeys(kinds) {
		k := kinds[name]
		if k.Item {
			add(k.KindPriority())
		}
		for _, l := range k.Links {
			if kinds[l.Kind].Item {
				add(LinkPriority(kinds, l))
			}
		}
	}
	slices.Sort(out)
	slices.Reverse(out)
	return out
}

// QueueBands are the priorities of the bands the job's slave queues are
// kept in, highest first (ItemPriorities), when its item pages have
// priorities other than 0; else nil: one list per slave, as a job
// without priorities always had.
func (s *Job) QueueBands() []int {
	if p := s.ItemPriorities(); len(p) > 1 {
		return p
	}
	return nil
}

// validatePriorities checks the job's priority, its kinds' and their link
// rules', and how many distinct ones its item pages have.
func (s *Job) validatePriorities() error {
	if err := checkPriority("priority", &s.Priority); err != nil {
		return err
	}
	if s.ShortForm() {
		if err := s.checkShortPriorities(); err != nil {
			return err
		}
	}
	for _, name := range sortedKeys(s.Kinds) {
		k := s.Kinds[name]
		if err := checkPriority("kinds."+name+".priority", k.Priority); err != nil {
			return err
		}
		for i, l := range k.Links {
			if err := checkPriority(fmt.Sprintf("kinds.%s.links[%d].priority", name, i), l.Priority); err != nil {
				return err
			}
		}
	}
	if n := len(s.ItemPriorities()); n > MaxItemPriorities {
		return fmt.Errorf("priority: the item pages have %d distinct priorities, more than %d", n, MaxItemPriorities)
	}
	return nil
}

func (s *Job) checkShortPriorities() error {
	if s.NextLink != nil {
		if err := checkPriority("next_link.priority", s.NextLink.Priority); err != nil {
			return err
		}
	}
	if s.DetailLink != nil {
		return checkPriority("detail_link.priority", s.DetailLink.Priority)
	}
	return nil
}

// SetPriority gives the job priority p (client submit --priority, the
// API's ?priority=), refused when out of range with an error naming what
// (the flag or parameter).
func (s *Job) SetPriority(what string, p int) error {
	if err := checkPriority(what, &p); err != nil {
		return err
	}
	s.Priority = p
	return nil
}

// checkPriority checks a priority given at path (nil: not given).
func checkPriority(path string, p *int) error {
	if p != nil && (*p < MinPriority || *p > MaxPriority) {
		return fmt.Errorf("%s: %d is not between %d and %d", path, *p, MinPriority, MaxPriority)
	}
	return nil
}
