package proxytest

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/url"
	"sync"

	socks5 "github.com/armon/go-socks5"
)

// NewSOCKS5 starts a SOCKS5 proxy (no authentication; with user and pass
// set, username/password authentication). Requests counts its CONNECTs.
func NewSOCKS5(user, pass string) (*Server, error) {
	ln, err := listen()
	if err != nil {
		return nil, err
	}
	s := &Server{scheme: "socks5", ln: ln}
	conf := &socks5.Config{
		Logger: log.New(io.Discard, "", 0),
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			s.requests.Add(1)
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}
	if user != "" {
		conf.Credentials = socks5.StaticCredentials{user: pass}
		s.user = url.UserPassword(user, pass)
	}
	srv, err := socks5.New(conf)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("proxytest: socks5: %w", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	s.stop = func() { <-done }
	return s, nil
}

// NewStall starts a listener that accepts connections, reads what it is
// sent and never answers, until Close.
func NewStall() (*Server, error) {
	return serveRaw(func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })
}

// NewGarbage starts a listener that answers every connection with bytes
// that are not HTTP and hangs up.
func NewGarbage() (*Server, error) {
	return serveRaw(func(c net.Conn) {
		buf := make([]byte, 1024)
		_, _ = c.Read(buf)
		_, _ = c.Write([]byte("\x00\x17garbage, not a proxy \xff\xfe\r\n\r\n"))
	})
}

// serveRaw runs handle on every accepted connection, then closes it.
func serveRaw(handle func(net.Conn)) (*Server, error) {
	ln, err := listen()
	if err != nil {
		return nil, err
	}
	s := &Server{scheme: "http", ln: ln}
	var wg sync.WaitGroup
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.requests.Add(1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				handle(c)
			}()
		}
	}()
	s.stop = func() {
		<-done
		ln.closeAll()
		wg.Wait()
	}
	return s, nil
}
