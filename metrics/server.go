package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/hostguard"
)

// shutdownTimeout bounds how long a Server waits for scrapes in progress
// when it stops.
const shutdownTimeout = 5 * time.Second

// Server serves a Registry over HTTP: /metrics in the Prometheus exposition
// formats and /healthz ("ok"). It runs until the context given to Serve
// ends or Close is called. A request for anything but /healthz whose Host
// header does not name the server (an IP address, localhost, the listen
// address's host, this machine's name or a WithAllowedHosts name) is
// refused with 421: a page whose name is rebound to the listener's
// address (DNS rebinding) cannot read the metrics or the profiles.
type Server struct {
	srv  *http.Server
	addr string
	stop context.CancelFunc
	done chan struct{}
	err  error
}

// Serve binds addr (host:port; port 0 picks a free one, see Addr) and
// serves r on it in the background until ctx ends. Give it a loopback
// address (DefaultAddr) unless the metrics must be reachable from other
// hosts. Wait or Close joins it.
func Serve(ctx context.Context, addr string, r *Registry, opts ...ServeOption) (*Server, error) {
	if r == nil {
		return nil, errors.New("metrics: Serve needs a registry")
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, cluster.Invalid("Addr", addr, "is not host:port")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics listen: %w", err)
	}
	c := serveConfig{mux: http.NewServeMux()}
	c.mux.Handle("GET /metrics", r.Handler())
	for _, o := range opts {
		o(&c)
	}
	ctx, stop := context.WithCancel(ctx)
	s := &Server{
		srv:  &http.Server{Handler: c.handler(ln.Addr().String()), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute},
		addr: ln.Addr().String(),
		stop: stop,
		done: make(chan struct{}),
	}
	go s.run(ctx, ln)
	return s, nil
}

// ServeOption adds to what a Server serves or answers to.
type ServeOption func(*serveConfig)

// serveConfig is what the options of Serve build.
type serveConfig struct {
	mux   *http.ServeMux
	hosts []string // allowed Host names besides the defaults
}

// handler serves /healthz to anyone and the rest behind the Host check.
func (c *serveConfig) handler(addr string) http.Handler {
	guarded := hostguard.Handler(c.mux, hostguard.Options{Addr: addr, Allowed: c.hosts,
		Refusal: func(host string) string {
			return "this metrics listener does not answer to the host name " + host +
				" (allow it with --metrics-host " + host + ")"
		}})
	root := http.NewServeMux()
	root.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	root.Handle("/", guarded)
	return root
}

// WithAllowedHosts adds host names a request's Host header may give
// besides IP addresses, localhost, the listen address's host and this
// machine's name: the names a Prometheus server scrapes the process by.
func WithAllowedHosts(hosts ...string) ServeOption {
	return func(c *serveConfig) { c.hosts = append(c.hosts, hosts...) }
}

// WithProfiles serves the Go runtime's profiles at /debug/pprof/ beside
// /metrics (CPU, heap, goroutines, ...: go tool pprof reads them), for
// finding where a process spends its time. A CPU profile costs while it
// runs; the address should stay on loopback.
func WithProfiles() ServeOption {
	return func(c *serveConfig) {
		mux := c.mux
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
}

// run serves until ctx ends, then shuts down; both goroutines end before
// done closes.
func (s *Server) run(ctx context.Context, ln net.Listener) {
	defer close(s.done)
	served := make(chan error, 1)
	go func() { served <- s.srv.Serve(ln) }()
	select {
	case err := <-served:
		s.err = fmt.Errorf("metrics serve: %w", err)
		return
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := s.srv.Shutdown(sctx); err != nil {
		_ = s.srv.Close()
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		s.err = fmt.Errorf("metrics serve: %w", err)
	}
}

// Addr is the address the server listens on, with the real port.
func (s *Server) Addr() string { return s.addr }

// Wait blocks until the server has stopped (its context ended, or Close)
// and returns why it stopped early, if it did.
func (s *Server) Wait() error {
	<-s.done
	return s.err
}

// Close stops the server, waiting up to 5 seconds for scrapes in progress,
// and returns as Wait does.
func (s *Server) Close() error {
	s.stop()
	return s.Wait()
}
