package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/proxy/proxytest"
)

// proxyHelperEnv, set to 1, makes the test binary a proxy process: it
// serves a healthy proxytest forward proxy on loopback, prints its source
// line, and serves until its stdin closes or it is killed. The cluster
// tests start proxies this way, as processes of their own, so that killing
// one with SIGKILL is what kill -9 does to a real proxy.
const proxyHelperEnv = "CRAWLER_PROXY_HELPER"

// init turns the test binary into a proxy process when asked, before
// TestMain would build the crawler binary: the helper needs none of it.
func init() {
	if os.Getenv(proxyHelperEnv) == "1" {
		os.Exit(serveProxyHelper(os.Stdin, os.Stdout))
	}
}

// serveProxyHelper is the proxy process's main.
func serveProxyHelper(stdin io.Reader, stdout io.Writer) int {
	p, err := proxytest.NewHTTP()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer p.Close()
	fmt.Fprintln(stdout, p.Line())
	_, _ = io.Copy(io.Discard, stdin) // until the test closes it, or dies
	return 0
}

// proxyProc is a proxy process started by a test.
type proxyProc struct {
	line  string // its source line, http://127.0.0.1:PORT
	addr  string // its host:port, as it names itself in proxytest.ProxiedBy
	cmd   *exec.Cmd
	stdin io.Closer
	done  chan struct{} // closed when the process has exited
}

// startProxyProc starts a proxy process and waits for its address; it is
// stopped when the test ends.
func startProxyProc(t *testing.T) *proxyProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(cleanEnv(), proxyHelperEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start proxy process: %v", err)
	}
	p := &proxyProc{cmd: cmd, stdin: stdin, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.stdin.Close()
		_ = cmd.Process.Kill()
		<-p.done
	})
	p.line = readLine(t, stdout, 30*time.Second)
	p.addr = strings.TrimPrefix(p.line, "http://")
	return p
}

// readLine reads the proxy process's first line of output.
func readLine(t *testing.T, r io.Reader, timeout time.Duration) string {
	t.Helper()
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		lines <- strings.TrimSpace(line)
	}()
	select {
	case line := <-lines:
		if !strings.HasPrefix(line, "http://127.0.0.1:") {
			t.Fatalf("proxy process printed %q, want its source line", line)
		}
		return line
	case <-time.After(timeout):
		t.Fatalf("proxy process printed nothing in %s", timeout)
		return ""
	}
}

// kill sends the proxy process SIGKILL and waits until it is gone: its
// port refuses, its connections are dropped.
func (p *proxyProc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatalf("kill proxy process: %v", err)
	}
	<-p.done
}

// viaCount is a site's own count of the requests it answered, by the
// proxy that relayed each (the proxytest.ProxiedBy header); Direct counts
// the ones no proxy relayed.
type viaCount struct {
	mu     sync.Mutex
	by     map[string]int64
	direct int64
}

func (v *viaCount) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v.mu.Lock()
		if via := r.Header.Get(proxytest.ProxiedBy); via != "" {
			if v.by == nil {
				v.by = map[string]int64{}
			}
			v.by[via]++
		} else {
			v.direct++
		}
		v.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// counts returns the requests relayed by each of procs, and the direct
// ones.
func (v *viaCount) counts(procs ...*proxyProc) (relayed []int64, direct int64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, p := range procs {
		relayed = append(relayed, v.by[p.addr])
	}
	return relayed, v.direct
}

// total is every request the site answered.
func (v *viaCount) total() int64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	n := v.direct
	for _, c := range v.by {
		n += c
	}
	return n
}

// holds polls cond every 50ms for d and fails the test the first time it
// does not hold: a state that must last, checked throughout.
func holds(t *testing.T, d time.Duration, what string, cond func() error) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if err := cond(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
}

func sum(ns []int64) int64 {
	var s int64
	for _, n := range ns {
		s += n
	}
	return s
}
