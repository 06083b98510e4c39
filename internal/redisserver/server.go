package redisserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNotInstalled means no redis-server executable was found.
var ErrNotInstalled = errors.New("redis-server is not installed")

// Options says how to start the server.
type Options struct {
	// Path is the redis-server executable, looked up on $PATH when it has
	// no slash; empty means "redis-server".
	Path string
	// Socket serves on a Unix socket only, in the server's own directory,
	// readable by this user alone; else on a free loopback port.
	Socket bool
	// Ready bounds the wait for the server to answer; 0 means 10s.
	Ready time.Duration
}

// Server is a running redis-server.
type Server struct {
	cmd     *exec.Cmd
	network string // "unix" or "tcp"
	addr    string
	dir     string
	version string
	done    chan struct{}
}

// Start starts a server and waits until it answers. It returns an error
// wrapping ErrNotInstalled when the executable is not found.
func Start(ctx context.Context, opts Options) (*Server, error) {
	path := opts.Path
	if path == "" {
		path = "redis-server"
	}
	exe, err := exec.LookPath(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotInstalled, err)
	}
	var last error
	for range 3 { // a free port may be taken between the probe and the start
		s, err := start(ctx, exe, opts)
		if err == nil {
			return s, nil
		}
		last = err
	}
	return nil, last
}

func start(ctx context.Context, exe string, opts Options) (*Server, error) {
	dir, err := os.MkdirTemp("", "crawler-redis")
	if err != nil {
		return nil, fmt.Errorf("redis server: %w", err)
	}
	s := &Server{dir: dir, done: make(chan struct{})}
	args := []string{"--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir,
		"--logfile", filepath.Join(dir, "redis.log")}
	if opts.Socket {
		s.network, s.addr = "unix", filepath.Join(dir, "redis.sock")
		args = append(args, "--port", "0", "--unixsocket", s.addr, "--unixsocketperm", "700")
	} else {
		port, err := freePort()
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		s.network, s.addr = "tcp", "127.0.0.1:"+strconv.Itoa(port)
		args = append(args, "--port", strconv.Itoa(port))
	}
	s.cmd = exec.Command(exe, args...)
	s.cmd.SysProcAttr = childAttr() // it dies with us, even killed
	if err := s.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("redis server: %w", err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	ready := opts.Ready
	if ready <= 0 {
		ready = 10 * time.Second
	}
	if err := s.waitReady(ctx, ready); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitReady waits until the server answers PING, and reads its version.
func (s *Server) waitReady(ctx context.Context, within time.Duration) error {
	rdb := redis.NewClient(&redis.Options{Network: s.network, Addr: s.addr, MaxRetries: -1, DisableIdentity: true})
	defer rdb.Close()
	deadline := time.Now().Add(within)
	for {
		if rdb.Ping(ctx).Err() == nil {
			s.version, _ = Version(ctx, rdb)
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("redis server exited at start: %s", s.logTail())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis server on %s does not answer: %s", s.addr, s.logTail())
		}
	}
}

func (s *Server) logTail() string {
	raw, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	return strings.Join(lines[max(0, len(lines)-3):], " / ")
}

// Options returns client options that reach the server.
func (s *Server) Options() *redis.Options {
	return &redis.Options{Network: s.network, Addr: s.addr, DisableIdentity: true}
}

// URL is the server's redis:// (TCP) or unix:// URL.
func (s *Server) URL() string {
	if s.network == "unix" {
		return "unix://" + s.addr
	}
	return "redis://" + s.addr + "/0"
}

// Version is the server's redis_version.
func (s *Server) Version() string { return s.version }

// PID is the server's process ID.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Close stops the server (SIGTERM, SIGKILL after 5 seconds) and removes
// its directory.
func (s *Server) Close() error {
	defer os.RemoveAll(s.dir)
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return nil
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
		return errors.New("redis server: killed after 5s")
	}
}

// Version reads a server's redis_version.
func Version(ctx context.Context, rdb redis.UniversalClient) (string, error) {
	info, err := rdb.Info(ctx, "server").Result()
	if err != nil {
		return "", fmt.Errorf("redis info server: %w", err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			return v, nil
		}
	}
	return "", errors.New("redis info server: no redis_version")
}
