package slave

import (
	"runtime"
	"sync"
)

// extractors run the CPU-bound part of a fetched page's life (parsing,
// extractorCall, simhash) on a few long-lived goroutines, as many as the
// process may run at once: a slave fetching 32 pages at a time then does
// not parse 32 pages at a time, each on a fresh goroutine whose stack
// grows (and is copied) as the parser recurses, all thrashing two cores.
// A page waits for a free extractor without holding a host slot (the
// downloader released it when the response was read).
type extractors struct {
	work chan extractorCall
	stop chan struct{}
	wg   sync.WaitGroup
}

// extractorCall is one call of run, and the channel closed when it returns.
type extractorCall struct {
	fn   func()
	done chan struct{}
}

// extractorCount is how many extractors a slave runs: GOMAXPROCS, and at
// least 2 so that one page at its work budget does not stall the rest.
func extractorCount() int { return max(2, runtime.GOMAXPROCS(0)) }

// startExtractors starts n extractors; stop ends them.
func startExtractors(n int) *extractors {
	e := &extractors{work: make(chan extractorCall), stop: make(chan struct{})}
	for range n {
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			for {
				select {
				case x := <-e.work:
					x.fn()
					close(x.done)
				case <-e.stop:
					return
				}
			}
		}()
	}
	return e
}

// run runs fn on an extractor and returns when it has returned; once the
// extractors are stopped, on the caller's goroutine.
func (e *extractors) run(fn func()) {
	x := extractorCall{fn: fn, done: make(chan struct{})}
	select {
	case e.work <- x:
		<-x.done
	case <-e.stop:
		fn()
	}
}

// close stops the extractors once they are idle; run calls after it run
// on their caller's goroutine.
func (e *extractors) close() {
	close(e.stop)
	e.wg.Wait()
}
