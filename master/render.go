package master

import (
	"context"
	"slices"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/assign"
	"github.com/crawler-dev/crawler/downloader"
	"github.com/crawler-dev/crawler/queue"
)

// Rendered kinds (render: true) are routed only among the live slaves that
// announce a browser (cluster.NodeInfo.Render), by the same two-level hash
// over that part of the table: a renderer joining or leaving moves only its
// own share. While none is live their tasks wait on the job's render-wait
// list (cluster.JobKeys.RenderWait), counted by the status, and are routed
// from there once one joins (routeRenderWaiting, each reclaim tick, which
// reads the list only while a renderer is live). A slave that takes such a
// task and cannot render it after all parks it there again.

// renderRoutes returns the live slaves that can render, prepared for
// routing, or nil if none is live.
func (m *Master) renderRoutes() *assign.Snapshot {
	s := m.renderers.Load()
	if s == nil || s.Len() == 0 {
		return nil
	}
	return s
}

// routeKind routes the task of kind whose routing key is key: over all
// live slaves, or, for a rendered kind, over those that can render, or to
// queue.RenderWait while none can.
func (r *jobRunner) routeKind(all *assign.Snapshot, kind string, key []byte) (int, error) {
	if !r.renderKinds[kind] {
		return all.Route(key)
	}
	renderers := r.m.renderRoutes()
	if renderers == nil {
		return queue.RenderWait, nil
	}
	return renderers.Route(key)
}

// routeRenderWaiting routes the tasks waiting for a slave that can render,
// a batch per tick, once one is live; the list is not read while none is.
func (r *jobRunner) routeRenderWaiting(ctx context.Context, depth queue.Depth) {
	if depth.RenderWait == 0 || r.m.renderRoutes() == nil {
		return
	}
	r.routeWaiting(ctx, r.keys.RenderWait(), r.queues.MoveFromRenderWait, "tasks that waited for a slave that can render")
}

// movedTo is the set of slaves moves give tasks to.
func movedTo(moves []queue.Move) map[int]bool {
	to := map[int]bool{}
	for _, m := range moves {
		if m.To != queue.RenderWait {
			to[m.To] = true
		}
	}
	return to
}

// renderedKinds lists the job's rendered kinds that are item kinds (item
// true) or list kinds (item false), sorted.
func (r *jobRunner) renderedKinds(item bool) []string {
	var kinds []string
	for k := range r.renderKinds {
		if r.itemKind(k) == item {
			kinds = append(kinds, k)
		}
	}
	slices.Sort(kinds)
	return kinds
}

// sayRenderers says at a round's start when the job's rendered item kinds
// have no live slave that can render them: their tasks wait until a slave
// with a browser joins.
func (r *jobRunner) sayRenderers() {
	kinds := r.renderedKinds(true)
	if len(kinds) == 0 || r.m.renderRoutes() != nil {
		return
	}
	r.log.Warn("job renders pages but no live slave can render (none has a browser); their tasks wait until one joins (crawler slave --browser PATH)",
		zap.Strings("kinds", kinds))
}

// checkListRenderer says at a round's start when the job's rendered list
// kinds, which this master fetches, cannot be rendered here: no renderer,
// or a browser that is not installed or does not start (it is started
// now). Their pages fail with that reason.
func (r *jobRunner) checkListRenderer(ctx context.Context) {
	kinds := r.renderedKinds(false)
	if len(kinds) == 0 {
		return
	}
	err := downloader.ErrNoRenderer
	if rr := r.m.deps.Renderer; rr != nil {
		err = rr.Check(ctx)
	}
	if err != nil && ctx.Err() == nil {
		r.log.Error("job renders list pages on the master but this master cannot render; they fail (start the master with --browser PATH)",
			zap.Strings("kinds", kinds), zap.Error(err))
	}
}
