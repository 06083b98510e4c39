package render

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Usage is what the browser uses: its memory and the CPU time it spent.
type Usage struct {
	// Memory is the proportional resident memory (Pss) of the browser
	// and its child processes, in bytes; 0 when no browser runs.
	Memory int64
	// CPU is the user and system time of the browser and its child
	// processes, those that ended included, since it started.
	CPU time.Duration
}

// Usage reads the running browser's usage from /proc (zero when no
// browser runs, or where /proc cannot tell): benchmarks compare it with
// plain fetches, per page and per tab.
func (r *Renderer) Usage() Usage {
	r.mu.Lock()
	pid := 0
	if r.cur != nil {
		pid = r.cur.pid
	}
	r.mu.Unlock()
	if pid == 0 {
		return Usage{}
	}
	return Usage{Memory: treeRSS(pid), CPU: treeCPU(pid)}
}

// clockTicks is the kernel's USER_HZ, the unit of /proc/PID/stat's times.
const clockTicks = 100

// treeCPU is the CPU time of pid and its live descendants, with what the
// ended children they reaped spent (cutime, cstime).
func treeCPU(pid int) time.Duration {
	var ticks int64
	for _, p := range descendants(pid) {
		ticks += cpuTicks(p)
	}
	return time.Duration(ticks) * time.Second / clockTicks
}

// cpuTicks is pid's utime+stime+cutime+cstime.
func cpuTicks(pid int) int64 {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	_, rest, ok := bytes.Cut(b, []byte(") "))
	f := strings.Fields(string(rest))
	if !ok || len(f) < 15 {
		return 0
	}
	var n int64
	for _, i := range []int{11, 12, 13, 14} { // utime, stime, cutime, cstime (fields 14-17 of stat)
		v, _ := strconv.ParseInt(f[i], 10, 64)
		n += v
	}
	return n
}
