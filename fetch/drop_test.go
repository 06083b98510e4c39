package fetch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rawServer is a TCP listener on 127.0.0.1 whose connections are handled by
// serve, given the connection's number (1, 2, ...).
type rawServer struct {
	ln    net.Listener
	conns atomic.Int64
	wg    sync.WaitGroup
}

func newRawServer(t *testing.T, serve func(n int64, c net.Conn)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n := s.conns.Add(1)
			s.wg.Go(func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(10 * time.Second))
				serve(n, c)
			})
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		s.wg.Wait()
	})
	return s
}

func (s *rawServer) URL() string { return "http://" + s.ln.Addr().String() }

// readRequest consumes one HTTP request from c.
func readRequest(c net.Conn) {
	_, _ = http.ReadRequest(bufio.NewReader(c))
}

// answer writes a complete HTML answer.
func answer(c net.Conn, body string) {
	fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
}

func TestFetcher_droppedConnections(t *testing.T) {
	for _, tc := range []struct {
		name  string
		drop  func(c net.Conn) // what the first connection gets
		cause error
	}{
		{"closed without an answer", func(c net.Conn) { readRequest(c) }, io.EOF},
		{"closed mid-body", func(c net.Conn) {
			readRequest(c)
			fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100\r\n\r\n<p>only ten")
		}, io.ErrUnexpectedEOF},
		{"closed mid-headers", func(c net.Conn) {
			readRequest(c)
			fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Type: text/ht")
		}, io.ErrUnexpectedEOF},
	} {
		// The first connection drops; the next ones answer.
		serve := func(n int64, c net.Conn) {
			if n == 1 {
				tc.drop(c)
				return
			}
			readRequest(c)
			answer(c, "<p>second try</p>")
		}
		t.Run(tc.name+"/Do says transient", func(t *testing.T) {
			s := newRawServer(t, serve)
			_, err := testFetcher(nil).Do(context.Background(), Request{URL: s.URL(), AllowPrivate: true})
			fe := fetchError(t, err)
			if !fe.Transient || !errors.Is(err, tc.cause) || fe.ProxyFault || fe.Tries != 1 {
				t.Errorf("Do = %v: transient %v, Is(%v) %v, proxy fault %v, tries %d; want transient, not the proxy's, 1 try",
					err, fe.Transient, tc.cause, errors.Is(err, tc.cause), fe.ProxyFault, fe.Tries)
			}
		})
	}
}
