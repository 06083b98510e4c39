package proxytest

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// Server is one proxy on a loopback port.
type Server struct {
	scheme   string
	user     *url.Userinfo
	ln       *trackListener
	requests atomic.Int64
	stop     func()
	once     sync.Once
}

// Addr is the proxy's host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Line is the proxy as a source line, credentials included when it has
// them: scheme://[user:pass@]host:port.
func (s *Server) Line() string { return s.URL().String() }

// URL is the proxy's URL, credentials included when it has them.
func (s *Server) URL() *url.URL {
	return &url.URL{Scheme: s.scheme, User: s.user, Host: s.Addr()}
}

// Requests counts the proxy requests it received: plain requests to
// forward, CONNECT requests, SOCKS5 connect commands; for the stalling and
// garbage listeners, connections.
func (s *Server) Requests() int64 { return s.requests.Load() }

// Conns counts the TCP connections it accepted.
func (s *Server) Conns() int64 { return s.ln.accepted.Load() }

// Close stops the proxy and drops every connection, tunnels included, as a
// killed process would. It is safe to call twice.
func (s *Server) Close() {
	s.once.Do(func() {
		s.ln.Close()
		s.stop()
		s.ln.closeAll()
	})
}

// ClosedPort returns a source line for a loopback port nobody listens on.
func ClosedPort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("closed port: %w", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr, nil
}

// listen opens a tracked loopback listener.
func listen() (*trackListener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxytest: listen: %w", err)
	}
	return &trackListener{Listener: ln, conns: map[net.Conn]bool{}}, nil
}

// serveHTTP serves h on a new tracked listener.
func serveHTTP(scheme string, h func(s *Server) http.Handler) (*Server, error) {
	ln, err := listen()
	if err != nil {
		return nil, err
	}
	s := &Server{scheme: scheme, ln: ln}
	srv := &http.Server{Handler: h(s), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	s.stop = func() {
		srv.Close()
		<-done
	}
	return s, nil
}

// trackListener remembers its connections so Close can drop them all.
type trackListener struct {
	net.Listener
	accepted atomic.Int64
	mu       sync.Mutex
	conns    map[net.Conn]bool
	closed   bool
}

func (l *trackListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.accepted.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		c.Close()
		return nil, net.ErrClosed
	}
	l.conns[c] = true
	return &trackedConn{Conn: c, l: l}, nil
}

func (l *trackListener) closeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	for c := range l.conns {
		c.Close()
	}
	clear(l.conns)
}

type trackedConn struct {
	net.Conn
	l    *trackListener
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c.Conn)
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}
