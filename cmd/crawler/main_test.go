package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/demosite"
)

// crawlerBin is the crawler binary, built with -race the first time a
// test starts a process (unit tests of this package do not wait for it).
var (
	crawlerBin   string
	buildOnce    sync.Once
	buildErr     error
	buildDirRoot string
)

func TestMain(m *testing.M) {
	code := m.Run()
	for _, dir := range []string{buildDirRoot, plainDir, childTmp} {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
	os.Exit(code)
}

// binary returns the crawler binary, building it on first use.
func binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "crawler-bin")
		if err != nil {
			buildErr = err
			return
		}
		buildDirRoot = dir
		bin := filepath.Join(dir, "crawler")
		build := exec.Command("go", "build", "-race", "-o", bin, ".")
		if out, err := build.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("build crawler: %v\n%s", err, out)
			return
		}
		crawlerBin = bin
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return crawlerBin
}

// proc is a crawler process started by a test.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{} // closed when the process has exited
}

// syncBuffer is a bytes.Buffer safe for a process to write while a test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// start runs the crawler binary with args in the background; it is killed
// when the test ends, and its output is logged if the test failed.
func start(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, cmd: exec.Command(binary(t), args...), out: &syncBuffer{}, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.Env = cleanEnv()
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
		if t.Failed() || os.Getenv("CRAWLER_TEST_LOGS") != "" {
			t.Logf("--- output of %s:\n%s", name, tail(p.out.String(), 6000))
		}
	})
	return p
}

// cleanEnv is the environment without CRAWLER_* settings that would change
// what the flags in a test say, with TMPDIR the test binary's own
// (childTempDir).
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CRAWLER_") {
			env = append(env, kv)
		}
	}
	if dir := childTempDir(); dir != "" {
		env = append(env, "TMPDIR="+dir)
	}
	return env
}

var (
	childTmpOnce sync.Once
	childTmp     string // removed by TestMain
)

// childTempDir is the TMPDIR of the crawler processes the tests start:
// the temporary directories of those a test kills go with the test
// binary's, not into the system's ("" when it cannot be made).
func childTempDir() string {
	childTmpOnce.Do(func() { childTmp, _ = os.MkdirTemp("", "crawler-test-tmp") })
	return childTmp
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// crawler runs the crawler binary to completion and returns its stdout,
// stderr and exit error.
func crawler(t *testing.T, timeout time.Duration, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	bin := binary(t) // built first: the build is not the process's time
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = cleanEnv()
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// serveSite serves a demo site on loopback for the test's duration.
func serveSite(t *testing.T, opts demosite.Options) (*demosite.Site, string) {
	t.Helper()
	site := demosite.New(opts)
	srv := httptest.NewServer(site)
	t.Cleanup(srv.Close)
	return site, srv.URL
}

// writeJob writes a job file for the site and returns its path.
func writeJob(t *testing.T, name, base string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, []byte(demosite.JobYAML(name, base)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// jobStatus reads a job's status as `crawler client status` does, on the
// default node table.
func jobStatus(ctx context.Context, rdb redis.UniversalClient, keys cluster.Keys, job string) (*client.Status, error) {
	c, err := client.New(rdb, client.Options{Keys: keys})
	if err != nil {
		return nil, err
	}
	return c.Status(ctx, job)
}

// newRootCmd is the root command of a fresh app, for the tests that walk
// or run the command tree in this process.
func newRootCmd() *cobra.Command {
	return newRootCmdOf(&app{logger: zap.NewNop()})
}
