package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/proctmp"
	"github.com/crawler-dev/crawler/internal/testenv"
)

// TestRun_staleTempDirs (issue 29, item 8): a run keeps its temporary
// directories (a private redis-server's, a browser's profile) in one of
// its own, which names it as owner; after kill -9 that directory stays,
// and the next run removes it, leaves alone the directory of a process
// that still runs, and removes its own when it ends.
func TestRun_staleTempDirs(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	hold, asked := make(chan struct{}), make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/list":
			fmt.Fprint(w, `<html><body><div class="item"><a href="/d/1">1</a></div><div class="item"><a href="/d/2">2</a></div></body></html>`)
		case "/d/2": // held while the first run is killed
			select {
			case asked <- struct{}{}:
			default:
			}
			select {
			case <-hold:
			case <-r.Context().Done():
				return
			}
			fallthrough
		default:
			fmt.Fprintf(w, "<html><body><h1>%s</h1></body></html>", r.URL.Path)
		}
	}))
	t.Cleanup(srv.Close)
	job := filepath.Join(t.TempDir(), "temps.yaml")
	spec := fmt.Sprintf("name: temps\nseeds: [\"%s/list\"]\nallow_private_networks: true\ndetail_link: {css: \".item a\"}\nfields: {title: {css: h1}}\n", srv.URL)
	if err := os.WriteFile(job, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	runIn := func() *exec.Cmd {
		cmd := exec.Command(binary(t), "run", "--job", job, "-o", filepath.Join(t.TempDir(), "items.jsonl"), "--log-level", "warn")
		cmd.Env = append(cleanEnv(), "TMPDIR="+base)
		return cmd
	}

	first := runIn()
	var out bytes.Buffer
	first.Stdout, first.Stderr = &out, &out
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = first.Process.Kill(); _ = first.Wait() })
	select {
	case <-asked:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the first run never asked for /d/2:\n%s", out.String())
	}
	own := filepath.Join(base, fmt.Sprintf("%s%d-*", proctmp.Prefix, first.Process.Pid))
	_, redisInstalled := exec.LookPath("redis-server")
	testenv.Eventually(t, time.Minute, "the first run's directory holds its redis-server's", func() bool {
		dirs, _ := filepath.Glob(own)
		inside, _ := filepath.Glob(own + "/crawler-redis*")
		return len(dirs) == 1 && (len(inside) == 1 || redisInstalled != nil)
	})
	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	stale, _ := filepath.Glob(own)
	if len(stale) != 1 {
		t.Fatalf("after kill -9: %v, want the first run's directory left behind", stale)
	}
	if top := topLevel(t, base); len(top) != 1 {
		t.Errorf("%s holds %v, want only the first run's directory (the rest inside it)", base, top)
	}
	live := filepath.Join(base, proctmp.Prefix+"live")
	if err := os.Mkdir(live, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(live, proctmp.OwnerFile), []byte(fmt.Sprintf("%d\n", os.Getpid())), 0o600); err != nil {
		t.Fatal(err)
	}

	close(hold)
	if b, err := runIn().CombinedOutput(); err != nil {
		t.Fatalf("second run: %v\n%s", err, b)
	}
	if top := topLevel(t, base); fmt.Sprint(top) != fmt.Sprint([]string{proctmp.Prefix + "live"}) {
		t.Errorf("after the second run %s holds %v, want only the live process's directory", base, top)
	}
}

// topLevel names what dir holds.
func topLevel(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
