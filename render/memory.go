package render

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/chromedp"
	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/metrics"
)

// Options.MaxMemory bounds the browser twice. Between pages, a browser
// whose processes grew past it is restarted (checkMemory). While pages
// render, the renderer watches the memory of the browser's processes
// (memoryWatch): once they pass the cap, the largest renderer process,
// the one of the page that holds the most, is killed when it holds at
// least a tab's share of the cap (MaxMemory/(Tabs+1)), and the rendering
// of that page fails with ErrMemory ("render memory over N") instead of
// its item being stored; the other pages render on. When no page holds
// that much, the browser itself grew: it is restarted once its renderings
// end, and they are not failed. The watch reads /proc, not the page: a
// page's script that allocates in one long task cannot delay it.

// memoryWatchEvery is how often the memory of the browser's processes is
// read while pages render.
const memoryWatchEvery = 250 * time.Millisecond

// memoryWatch reads the memory of the browser's processes while pages
// render, and kills the largest renderer process once they use more than
// the cap. One serves every rendering of a Renderer; its readings are
// shared.
type memoryWatch struct {
	mu     sync.Mutex
	readAt time.Time    // when the processes were last read
	killed map[int]bool // renderer processes killed
	last   time.Time    // when one was last killed
	held   int64        // and the memory it held
}

// watchMemory has the rendering of the page ctx is the tab context of
// fail with ErrMemory (stop) when the watch kills its renderer process for
// memory, and with ErrBrowserDied when that process ends otherwise. It
// returns when ctx ends.
func (r *Renderer) watchMemory(ctx context.Context, in *instance, stop func(error)) {
	crashed := make(chan struct{}, 1)
	go func() {
		for _, err := range chromedp.Events(ctx, inspector.TargetCrashed) {
			if err == nil {
				select {
				case crashed <- struct{}{}:
				default:
				}
			}
			return
		}
	}()
	var tick <-chan time.Time
	if r.opts.MaxMemory > 0 && r.watchEvery > 0 {
		t := time.NewTicker(r.watchEvery)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
			r.memory.check(r, in)
		case <-crashed:
			if what, ok := r.memory.killedLately(); ok {
				stop(&memoryError{limit: r.opts.MaxMemory, what: what})
			} else {
				stop(fmt.Errorf("%w: the page's renderer process crashed", ErrBrowserDied))
			}
			return
		}
	}
}

// check reads the memory of in's processes, at most once per
// watchEvery whatever the number of renderings, and once they use more
// than the cap kills the largest page renderer or, when none holds a
// tab's share of the cap, retires the browser.
func (w *memoryWatch) check(r *Renderer, in *instance) {
	total, victim, held := w.read(r, in)
	switch {
	case total <= r.opts.MaxMemory:
	case victim == 0 || held < r.opts.MaxMemory/int64(r.opts.Tabs+1):
		r.retire(in, metrics.RestartMemory, fmt.Sprintf("memory %s over the cap of %s while pages rendered, no page holding a tab's share",
			mib(total), mib(r.opts.MaxMemory)))
	default:
		w.kill(r, victim, held, total)
	}
}

// read is the memory of in's processes (those killed left out), and the
// largest page renderer with what it holds; nothing when the last read
// is more recent than 9/10 of watchEvery.
func (w *memoryWatch) read(r *Renderer, in *instance) (total int64, victim int, held int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if time.Since(w.readAt) < r.watchEvery*9/10 {
		return 0, 0, 0
	}
	w.readAt = time.Now()
	for _, p := range descendants(in.pid) {
		if w.killed[p] {
			continue
		}
		m := rssOf(p)
		total += m
		if m > held && isPageRenderer(p) {
			victim, held = p, m
		}
	}
	return total, victim, held
}

// kill ends the renderer process victim, which held that much of total.
func (w *memoryWatch) kill(r *Renderer, victim int, held, total int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
		return
	}
	if w.killed == nil || time.Since(w.last) > time.Minute {
		w.killed = map[int]bool{}
	}
	w.killed[victim], w.last, w.held = true, time.Now(), held
	r.log.Warn("a page passed the memory cap while it rendered; its renderer process is killed and the page fails",
		zap.Int("pid", victim), zap.String("renderer", mib(held)), zap.String("browser", mib(total)),
		zap.String("cap", mib(r.opts.MaxMemory)))
}

// killedLately says what the last renderer killed for memory held, if
// one was killed in the last few seconds.
func (w *memoryWatch) killedLately() (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.last.IsZero() || time.Since(w.last) > 5*time.Second {
		return "", false
	}
	return fmt.Sprintf("the page's renderer process held %s when the browser's processes passed the cap", mib(w.held)), true
}

// isPageRenderer reports whether pid is one of Chromium's renderer
// processes for pages (not those of its own user interface), from its
// command line.
func isPageRenderer(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	return err == nil && bytes.Contains(b, []byte("--type=renderer")) && !bytes.Contains(b, []byte("--top-chrome-webui")) &&
		!bytes.Contains(b, []byte("--extension-process"))
}
