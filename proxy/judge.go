package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// TokenParam is the query parameter (and TokenHeader the request header)
// carrying the random token of one check; the judge echoes both.
const (
	TokenParam  = "token"
	TokenHeader = "X-Crawler-Check"
)

// JudgeReply is what the judge answers: the caller's address as the judge
// saw it, the request headers as they arrived, and the token of the check.
type JudgeReply struct {
	// Addr is the remote address of the connection (the proxy's egress).
	Addr string `json:"addr"`
	// Token is the query's token parameter.
	Token string `json:"token"`
	// Headers are the request headers as received.
	Headers http.Header `json:"headers"`
}

// Judge is the check endpoint the validator sends its checks to through
// each proxy. It echoes the caller's address, headers and token as JSON, so
// the validator can tell a proxy that altered the request or the answer
// (tampering) and one that reveals the crawler's own address (transparent).
// In production it must be reachable from the proxies: serve it on a
// public address and give that URL to the validator (Options.JudgeURL).
func Judge() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(JudgeReply{
			Addr: r.RemoteAddr, Token: r.URL.Query().Get(TokenParam), Headers: r.Header,
		})
	})
}

// JudgeServer is a running Judge.
type JudgeServer struct {
	srv  *http.Server
	ln   net.Listener
	done chan error
}

// ServeJudge serves the Judge on addr ("127.0.0.1:0" picks a free loopback
// port). Close stops it.
func ServeJudge(addr string) (*JudgeServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serve judge: %w", err)
	}
	j := &JudgeServer{
		srv:  &http.Server{Handler: Judge(), ReadHeaderTimeout: 10 * time.Second},
		ln:   ln,
		done: make(chan error, 1),
	}
	go func() { j.done <- j.srv.Serve(ln) }()
	return j, nil
}

// URL is the judge's address, e.g. http://127.0.0.1:40123/.
func (j *JudgeServer) URL() string { return "http://" + j.ln.Addr().String() + "/" }

// Close stops the judge and waits for it.
func (j *JudgeServer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := j.srv.Shutdown(ctx)
	if serr := <-j.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
