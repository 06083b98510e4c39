package main

import (
	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/metrics"
	"github.com/crawler-dev/crawler/render"
)

// renderFlags are the flags of the process's headless browser, which
// renders the pages of kinds that say render (master, slave, run, check).
type renderFlags struct {
	opts     render.Options
	renderer *render.Renderer
}

func (r *renderFlags) register(cmd *cobra.Command) {
	r.opts = render.DefaultOptions()
	f := cmd.Flags()
	f.StringVar(&r.opts.Browser, "browser", r.opts.Browser, "Chromium for the kinds that say render: a path or a name on PATH (started at the first such page)")
	f.IntVar(&r.opts.Tabs, "render-concurrency", r.opts.Tabs, "pages rendered at once in the browser, 1..256 (apart from --concurrency)")
	f.Var(byteSize{&r.opts.MaxMemory}, "render-max-memory", "restart the browser once it uses more than this (e.g. 2GiB; 0: no bound)")
}

// get returns the process's one Renderer; its browser starts at the first
// page that needs it, and its restarts are counted in reg (nil: nowhere).
func (r *renderFlags) get(log *zap.Logger, reg *metrics.Registry) (*render.Renderer, error) {
	if r.opts == (render.Options{}) { // a command without the flags: the defaults
		r.opts = render.DefaultOptions()
	}
	if r.renderer == nil {
		rr, err := render.New(r.opts, log)
		if err != nil {
			return nil, err
		}
		rr.OnRestart(reg.BrowserRestarted)
		r.renderer = rr
	}
	return r.renderer, nil
}

// close stops the browser, if one was started.
func (r *renderFlags) close() {
	if r.renderer != nil {
		_ = r.renderer.Close()
	}
}
