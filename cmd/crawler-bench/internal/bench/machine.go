package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// Machine describes where benchmarks ran.
type Machine struct {
	CPU     string // model name
	Cores   int    // logical CPUs
	Memory  int64  // bytes
	Kernel  string
	Go      string // the toolchain that built the binary
	Redis   string
	Crawler string // the binary's VCS revision
}

// readMachine reads this machine's description; redisVersion is the
// version of the Redis the benchmarks ran on.
func readMachine(redisVersion string) Machine {
	m := Machine{Cores: runtime.NumCPU(), Go: runtime.Version(), Redis: redisVersion,
		CPU: firstField("/proc/cpuinfo", "model name"), Crawler: buildRevision()}
	if kb, err := strconv.ParseInt(strings.Fields(firstField("/proc/meminfo", "MemTotal") + " 0")[0], 10, 64); err == nil {
		m.Memory = kb << 10
	}
	if raw, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = "Linux " + strings.TrimSpace(string(raw))
	}
	return m
}

// firstField is the value of the first "key: value" line of key in a
// /proc file, or "unknown".
func firstField(path, key string) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(raw), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// buildRevision is the binary's commit, marked when the tree was
// modified; when the binary was built without VCS stamps (-buildvcs=false),
// the commit of the git work tree it runs in.
func buildRevision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return gitRevision()
	}
	rev, dirty := "", ""
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision":
			rev = s.Value[:min(12, len(s.Value))]
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = " (with uncommitted changes)"
		}
	}
	if rev == "" {
		return gitRevision()
	}
	return rev + dirty
}

// gitRevision is `git describe --always --dirty` of the current
// directory, or "unknown".
func gitRevision() string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "describe", "--always", "--dirty").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out)) + " (git work tree)"
}

// Table is the machine as a table.
func (m Machine) Table() Table {
	t := Table{Header: []string{"item", "value"}}
	t.AddRow("CPU", m.CPU)
	t.AddRow("cores", strconv.Itoa(m.Cores))
	t.AddRow("memory", fmt.Sprintf("%.1f GiB", float64(m.Memory)/(1<<30)))
	t.AddRow("kernel", m.Kernel)
	t.AddRow("Go", m.Go)
	t.AddRow("Redis", m.Redis)
	t.AddRow("crawler", m.Crawler)
	return t
}
