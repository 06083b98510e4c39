package render

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/chromedp/chromedp"
	"go.uber.org/zap"
)

// instance is one run of the browser. Renderings hold it while they use
// it; a retired instance stops once the last of them ends.
type instance struct {
	ctx     context.Context // the browser's chromedp context
	stop    func()
	pid     int
	dataDir string
	// nowhere is the browser's only proxy (see sealFlags): whatever the
	// browser would send itself comes here and is refused.
	nowhere *nowhere

	mu      sync.Mutex
	users   int
	retired bool
}

// startBrowser starts Chromium at path with a profile of its own.
func startBrowser(o Options, log *zap.Logger) (*instance, error) {
	path, err := exec.LookPath(o.Browser)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoBrowser, err)
	}
	dir, err := os.MkdirTemp("", "crawler-chromium-")
	if err != nil {
		return nil, fmt.Errorf("render: profile dir: %w", err)
	}
	sink, err := listenNowhere(log)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("render: %w", err)
	}
	var out tailBuffer
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.DisableGPU, chromedp.UserDataDir(dir),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("mute-audio", true), chromedp.CombinedOutput(&out))
	opts = append(opts, sealFlags(sink.addr())...)
	if o.NoSandbox {
		opts = append(opts, chromedp.NoSandbox)
	}
	alloc, stopAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, stopCtx := chromedp.NewContext(alloc)
	inst := &instance{ctx: ctx, dataDir: dir, nowhere: sink, stop: func() {
		stopCtx()
		stopAlloc()
		sink.close()
		_ = os.RemoveAll(dir)
	}}
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		inst.stop()
		return nil, fmt.Errorf("%w: start %s: %w: %s", ErrNoBrowser, path, err, out.String())
	}
	if b := chromedp.FromContext(ctx).Browser; b != nil && b.Process() != nil {
		inst.pid = b.Process().Pid
	}
	return inst, nil
}

// alive reports whether the browser still runs.
func (in *instance) alive() bool { return in.ctx.Err() == nil && processAlive(in.pid) }

// hold counts a rendering that uses the instance; false if it is retired.
func (in *instance) hold() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.retired {
		return false
	}
	in.users++
	return true
}

// release ends a rendering's use; the last one of a retired instance
// stops the browser.
func (in *instance) release() {
	in.mu.Lock()
	in.users--
	last := in.retired && in.users == 0
	in.mu.Unlock()
	if last {
		in.stop()
	}
}

// retire stops the instance once no rendering uses it.
func (in *instance) retire() {
	in.mu.Lock()
	if in.retired {
		in.mu.Unlock()
		return
	}
	in.retired = true
	idle := in.users == 0
	in.mu.Unlock()
	if idle {
		in.stop()
	}
}

// processAlive reports whether pid runs and is not a zombie.
func processAlive(pid int) bool {
	if pid == 0 {
		return true // unknown: trust the context
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	_, rest, ok := bytes.Cut(b, []byte(") "))
	return ok && len(rest) > 0 && rest[0] != 'Z' && rest[0] != 'X'
}

// treeRSS is the resident memory, in bytes, of pid and its descendants
// (Chromium's renderer, GPU and utility processes), from /proc; 0 where
// /proc cannot tell. Each process counts its proportional share (Pss) of
// the pages it shares with the others, so the browser's libraries and
// shared memory are counted once, not once per process.
func treeRSS(pid int) int64 {
	var total int64
	for _, p := range descendants(pid) {
		total += rssOf(p)
	}
	return total
}

// descendants is pid and every process below it, from /proc; none when
// pid is 0.
func descendants(pid int) []int {
	if pid == 0 {
		return nil
	}
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp := parentOf(p); pp > 0 {
			children[pp] = append(children[pp], p)
		}
	}
	var all []int
	for stack := []int{pid}; len(stack) > 0; {
		p := stack[len(stack)-1]
		stack = append(stack[:len(stack)-1], children[p]...)
		all = append(all, p)
	}
	return all
}

// parentOf is pid's parent, from /proc/PID/stat; 0 when unknown.
func parentOf(pid int) int {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	_, rest, ok := bytes.Cut(b, []byte(") "))
	if !ok {
		return 0
	}
	f := strings.Fields(string(rest))
	if len(f) < 2 {
		return 0
	}
	pp, _ := strconv.Atoi(f[1])
	return pp
}

// rssOf is pid's proportional resident memory (Pss, from smaps_rollup)
// in bytes, or its VmRSS where the kernel has no smaps_rollup; 0 when
// unknown.
func rssOf(pid int) int64 {
	if kb, ok := procField(filepath.Join("/proc", strconv.Itoa(pid), "smaps_rollup"), "Pss:"); ok {
		return kb << 10
	}
	kb, _ := procField(filepath.Join("/proc", strconv.Itoa(pid), "status"), "VmRSS:")
	return kb << 10
}

// procField is the number of kB on the line of the /proc file at path
// that starts with name.
func procField(path, name string) (int64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb, err == nil
		}
	}
	return 0, false
}

// tailBuffer keeps the last 4 KiB written to it: the browser's output,
// for the error when it does not start.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if n := len(t.buf); n > 4<<10 {
		t.buf = append(t.buf[:0], t.buf[n-4<<10:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}
