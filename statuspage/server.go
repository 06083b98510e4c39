package statuspage

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/cluster"
)

// DefaultAddr is where the status page listens unless told otherwise:
// loopback only.
const DefaultAddr = "127.0.0.1:8090"

// Options configures the status page.
type Options struct {
	// Addr is the address New listens on; "127.0.0.1:0" picks a free
	// port. Default DefaultAddr.
	Addr string
	// Refresh is how often the page asks for a new snapshot. Default 1s.
	Refresh time.Duration
	// CacheFor is how long one snapshot answers every request, so that
	// many open pages cost Redis no more than one (a snapshot of 50 jobs
	// is about 6500 commands in 150 round trips); 0 reads one per request.
	// At most Refresh. Default 1s.
	CacheFor time.Duration
	// Timeout bounds the reading of one snapshot. Default 5s.
	Timeout time.Duration
	// HistoryEvery is how often the server samples the cluster for the
	// charts, whether a page is open or not; HistoryKeep how long it keeps
	// the samples (in memory: a sample is about 100 bytes plus 20 per
	// slave). Defaults 5s and 1h.
	HistoryEvery time.Duration
	HistoryKeep  time.Duration
	// AllowedHosts are the host names, besides IP addresses, localhost,
	// Addr's host and this machine's name, that a request's Host header
	// may give (the names operators reach the page by). Any other is
	// refused with 421: DNS rebinding.
	AllowedHosts []string
	// API, when set, serves every path under /api/v1/ beside the page:
	// the master's HTTP API (package api), behind the same host check.
	API http.Handler
	// Logger receives the server's own failures; nil means none.
	Logger *zap.Logger
}

// DefaultOptions returns the defaults.
func DefaultOptions() Options {
	return Options{Addr: DefaultAddr, Refresh: time.Second, CacheFor: time.Second, Timeout: 5 * time.Second,
		HistoryEvery: 5 * time.Second, HistoryKeep: time.Hour}
}

// Validate names the first option out of range.
func (o Options) Validate() error {
	switch {
	case o.Refresh < 100*time.Millisecond || o.Refresh > time.Hour:
		return cluster.Invalid("Refresh", o.Refresh, "is outside 100ms..1h")
	case o.CacheFor < 0 || o.CacheFor > o.Refresh:
		return cluster.Invalid("CacheFor", o.CacheFor, "is outside 0..Refresh (%v)", o.Refresh)
	case o.Timeout < time.Millisecond:
		return cluster.Invalid("Timeout", o.Timeout, "is below 1ms")
	case o.HistoryEvery < 100*time.Millisecond:
		return cluster.Invalid("HistoryEvery", o.HistoryEvery, "is below 100ms")
	case o.HistoryKeep < o.HistoryEvery || o.HistoryKeep > 24*time.Hour:
		return cluster.Invalid("HistoryKeep", o.HistoryKeep, "is outside HistoryEvery (%v)..24h", o.HistoryEvery)
	}
	return nil
}

// Server serves the status page on its own listener.
type Server struct {
	h   *handler
	srv *http.Server
	ln  net.Listener
	log *zap.Logger
}

// New listens on opts.Addr and returns the server, not yet serving: Run
// serves.
func New(src Source, opts Options) (*Server, error) {
	h, err := newHandler(src, opts)
	if err != nil {
		return nil, err
	}
	if opts.Addr == "" {
		return nil, cluster.Invalid("Addr", `""`, "is empty")
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("status page: %w", err)
	}
	log := opts.Logger
	if log == nil {
		log = zap.NewNop()
	}
	return &Server{
		h:   h,
		srv: &http.Server{Handler: checkHost(h.routes(), opts), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute},
		ln:  ln,
		log: log.Named("statuspage"),
	}, nil
}

// Addr is the address the server listens on, e.g. 127.0.0.1:8090.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL is the page's address, e.g. http://127.0.0.1:8090/.
func (s *Server) URL() string { return "http://" + s.Addr() + "/" }

// Run serves until ctx ends, then lets the requests under way finish (up
// to 2s; then their connections are cut, as are the idle connections
// browsers open ahead of time) and returns nil. It returns an error only if
// serving fails.
func (s *Server) Run(ctx context.Context) error {
	s.log.Info("status page serving", zap.String("url", s.URL()))
	done := make(chan error, 1)
	go func() { done <- s.srv.Serve(s.ln) }()
	sampling, stopSampling := context.WithCancel(ctx)
	defer stopSampling()
	go s.h.sampleLoop(sampling)
	select {
	case err := <-done:
		return fmt.Errorf("status page: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = s.srv.Close()
	}
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("status page: stop: %w", err)
	}
	return nil
}

// Close stops the server at once, dropping requests under way; it also
// releases the listener of a server that never ran.
func (s *Server) Close() error {
	err := s.srv.Close()
	if cerr := s.ln.Close(); err == nil && !errors.Is(cerr, net.ErrClosed) {
		err = cerr
	}
	return err
}
