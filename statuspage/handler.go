package statuspage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"
)

// securityPolicy lets the page load its own script and stylesheet and
// call its own API, nothing else: no inline script, no other host.
const securityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// NewHandler returns the status page's routes (see the package doc), for
// a caller that serves them itself; opts.Addr is not used.
// Its /api/history stays empty: a Server samples the cluster for it.
func NewHandler(src Source, opts Options) (http.Handler, error) {
	h, err := newHandler(src, opts)
	if err != nil {
		return nil, err
	}
	return h.routes(), nil
}

func newHandler(src Source, opts Options) (*handler, error) {
	if src == nil {
		return nil, errors.New("status page: source is nil")
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = zap.NewNop()
	}
	return &handler{src: src, opts: opts, log: log.Named("statuspage"),
		hist: &history{every: opts.HistoryEvery, keep: opts.HistoryKeep}}, nil
}

// routes are the handler's routes.
func (h *handler) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", h.servePage)
	mux.HandleFunc("GET /api/status", h.serveStatus)
	mux.HandleFunc("GET /api/history", h.serveHistory)
	mux.HandleFunc("GET /api/jobs/{name}", h.serveJob)
	mux.Handle("GET /static/", http.StripPrefix("/static/", staticHandler()))
	if h.opts.API != nil {
		mux.Handle("/api/v1/", h.opts.API)
	}
	return secure(mux)
}

func (h *handler) serveHistory(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, h.hist.get())
}

// handler serves the routes over one Source, sharing each snapshot among
// the requests of Options.CacheFor.
type handler struct {
	src  Source
	opts Options
	log  *zap.Logger
	hist *history

	mu     sync.Mutex // held while a snapshot is read: one read at a time
	snap   *Snapshot
	err    error
	readAt time.Time
}

// snapshot returns the cached snapshot, or reads a new one once the cached
// one is older than CacheFor. Errors are cached the same way, so a Redis
// that is down is not asked more often than a healthy one.
func (h *handler) snapshot(ctx context.Context) (*Snapshot, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.readAt.IsZero() && time.Since(h.readAt) < h.opts.CacheFor {
		return h.snap, h.err
	}
	ctx, cancel := context.WithTimeout(ctx, h.opts.Timeout)
	defer cancel()
	h.snap, h.err = h.src.Snapshot(ctx)
	if h.err == nil {
		h.snap.Totals = totalsOf(h.snap)
		for i := range h.snap.Jobs {
			h.snap.Jobs[i].withDuration(h.snap.Time)
		}
	}
	h.readAt = time.Now()
	return h.snap, h.err
}

func (h *handler) serveStatus(w http.ResponseWriter, r *http.Request) {
	snap, err := h.snapshot(r.Context())
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, errorReply{err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, snap)
}

func (h *handler) serveJob(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), h.opts.Timeout)
	defer cancel()
	job, err := h.src.Job(ctx, r.PathValue("name"))
	switch {
	case errors.Is(err, ErrNotFound):
		writeJSON(w, http.StatusNotFound, errorReply{err.Error()})
	case err != nil:
		writeJSON(w, http.StatusServiceUnavailable, errorReply{err.Error()})
	default:
		writeJSON(w, http.StatusOK, job)
	}
}

// servePage renders the page from the current snapshot; when none can be
// read it still renders, empty, with the error on top.
func (h *handler) servePage(w http.ResponseWriter, r *http.Request) {
	snap, err := h.snapshot(r.Context())
	data := h.pageData(snap, err)
	var buf bytes.Buffer
	if err := page.Execute(&buf, data); err != nil {
		h.log.Warn("render status page", zap.Error(err))
		http.Error(w, "status page: render failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_, _ = w.Write(buf.Bytes())
}

// errorReply is the JSON body of a failed API call.
type errorReply struct {
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "status page: encode: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// secure adds the headers that keep the page from being framed, sniffed
// or made to run anything but its own script.
func secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", securityPolicy)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}
