package slave

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/downloader"
	"github.com/crawler-dev/crawler/render"
)

// A slave renders the pages of kinds that say render only when it has a
// browser. It says so in its node record (cluster.NodeInfo.Render), read
// at start from Deps.Renderer.Available, and the masters route those
// kinds' tasks only among such slaves. A task of such a kind that reaches a
// slave that cannot render it (the table changed meanwhile, or the browser
// was found but does not start) is not failed: it is parked on the job's
// render-wait list, uncounted as a delivery, for the master to route to a
// slave that can; a browser that does not start also withdraws the slave's
// offer, so that no more come.

// renderOffer is whether the slave offers to render at start: it has a
// renderer whose browser is installed. Why not is logged.
func renderOffer(r *render.Renderer, log *zap.Logger) bool {
	if r == nil {
		log.Info("no renderer: this slave renders no pages; tasks of kinds that say render go to slaves that can")
		return false
	}
	if err := r.Available(); err != nil {
		log.Warn("no browser: this slave renders no pages; tasks of kinds that say render go to slaves that can", zap.Error(err))
		return false
	}
	return true
}

// canRender reports whether the slave renders pages now.
func (s *Slave) canRender() bool {
	s.infoMu.Lock()
	defer s.infoMu.Unlock()
	return s.info.Render
}

// nodeInfo is the slave's node record as it stands.
func (s *Slave) nodeInfo() cluster.NodeInfo {
	s.infoMu.Lock()
	defer s.infoMu.Unlock()
	return s.info
}

// jobRenders is told of each job loaded whose kinds render: it says so
// when this slave cannot render, and otherwise starts the browser now,
// off the dispatcher's path, so that one that does not start withdraws
// the offer before the job's tasks come.
func (s *Slave) jobRenders(name string) {
	if !s.canRender() {
		s.log.Warn("job renders pages but this slave has no browser; their tasks go to slaves that can (start a slave with --browser PATH)",
			zap.String("job", name))
		return
	}
	s.side.Add(1)
	go func() {
		defer s.side.Done()
		if err := s.deps.Renderer.Check(context.Background()); err != nil {
			s.withdrawRender(context.Background(), name, err)
		}
	}()
}

// withdrawRender takes back the slave's offer to render: its node record
// says so from now on, and the masters route rendered kinds elsewhere.
func (s *Slave) withdrawRender(ctx context.Context, job string, cause error) {
	s.infoMu.Lock()
	was := s.info.Render
	s.info.Render = false
	info := s.info
	s.infoMu.Unlock()
	if !was {
		return
	}
	s.log.Error("the browser does not start: this slave renders no pages from now on; tasks of kinds that say render go to slaves that can",
		zap.String("job", job), zap.Error(cause))
	if err := s.registry.Register(ctx, info); err != nil {
		s.log.Warn("withdraw the offer to render from the node table", zap.Error(err))
	}
}

// unrenderable reports whether a failed task failed for want of a browser
// on this slave (none, or one that does not start), not for its page.
func unrenderable(err error) bool {
	return errors.Is(err, render.ErrNoBrowser) || errors.Is(err, downloader.ErrNoRenderer)
}

// park hands a task this slave cannot render to the job's render-wait
// list, for a slave that can; if that fails, the task is let go and comes
// back after its lease.
func (s *Slave) park(ctx context.Context, w *work) {
	defer s.held.remove(w.job, w.raw)
	if _, err := w.job.queue.Park(ctx, []string{w.raw}); err != nil {
		s.log.Warn("park a task for a slave that can render; it comes back after its lease", zap.String("job", w.job.name), zap.Error(err))
		return
	}
	w.job.noteParked(s.log)
}

// noteParked says, once per job, that this slave hands its rendered
// kinds' tasks on.
func (j *job) noteParked(log *zap.Logger) {
	j.parked.Do(func() {
		log.Warn("tasks of kinds that say render handed on to a slave that can render: this one cannot",
			zap.String("job", j.name))
	})
}

// emptyWarnAfter is how many rendered pages of a kind are read before
// the slave judges whether its fields come out empty on most of them.
const emptyWarnAfter = 5

// renderedFields counts, per rendered item kind of a job, the pages read
// from their rendered DOM and how many times each field selected nothing:
// a field empty on most pages is often filled by a script after the page
// was read (a fetch() answered after the network went quiet, a timer),
// which only a wait_for catches. The slave says so once per kind.
type renderedFields struct {
	mu    sync.Mutex
	kinds map[string]*kindFields
}

// kindFields is what renderedFields keeps of one kind.
type kindFields struct {
	pages  int
	empty  map[string]int
	warned bool
}

// note counts a rendered page of kind whose fields named in empty
// selected nothing, and warns once per kind when, past emptyWarnAfter
// pages, some fields were empty on more than half of them.
func (r *renderedFields) note(log *zap.Logger, job, kind string, empty []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.kinds == nil {
		r.kinds = map[string]*kindFields{}
	}
	k := r.kinds[kind]
	if k == nil {
		k = &kindFields{empty: map[string]int{}}
		r.kinds[kind] = k
	}
	if k.warned {
		return
	}
	k.pages++
	for _, f := range empty {
		k.empty[f]++
	}
	if k.pages < emptyWarnAfter {
		return
	}
	var mostly []string
	for f, n := range k.empty {
		if 2*n > k.pages {
			mostly = append(mostly, fmt.Sprintf("%s (%d of %d)", f, n, k.pages))
		}
	}
	if len(mostly) == 0 {
		return
	}
	sort.Strings(mostly)
	k.warned = true
	log.Warn("fields of a rendered kind come out empty on most pages: the page may fill them after it is read; "+
		"give the kind a wait_for (a CSS selector of the filled element, or a delay)",
		zap.String("job", job), zap.String("kind", kind), zap.Strings("empty", mostly))
}
