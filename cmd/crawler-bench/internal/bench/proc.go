package bench

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is Linux's USER_HZ, the unit of CPU times in /proc/<pid>/stat:
// 100 on every architecture Go runs on.
const clockTick = 10 * time.Millisecond

// procCPU is the user+system CPU time a process has used so far, from
// /proc/<pid>/stat (fields 14 and 15, counted after the command name,
// which may hold spaces and parentheses).
func procCPU(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("cpu of pid %d: %w", pid, err)
	}
	return parseStatCPU(raw)
}

func parseStatCPU(raw []byte) (time.Duration, error) {
	end := bytes.LastIndexByte(raw, ')')
	if end < 0 {
		return 0, fmt.Errorf("cpu: no command name in /proc stat %.40q", raw)
	}
	// After ") ": state(3) ppid(4) ... utime(14) stime(15).
	fields := strings.Fields(string(raw[end+1:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("cpu: %d fields after the command name, want 13 or more", len(fields))
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("cpu: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, nil
}

// procPeakRSS is the peak resident set size of a process (VmHWM in
// /proc/<pid>/status), in bytes.
func procPeakRSS(pid int) (int64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("rss of pid %d: %w", pid, err)
	}
	return parseStatusKB(raw, "VmHWM:")
}

func parseStatusKB(raw []byte, field string) (int64, error) {
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s %w", field, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no %s in /proc status", field)
}
