package proctmp

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
)

// owner is a process that owns a directory: its ID and, where /proc
// tells it, its start time (clock ticks after boot), so that a process
// that reuses a dead owner's ID is not taken for it.
type owner struct {
	pid   int
	start uint64 // 0: unknown
}

// self is this process as an owner.
func self() owner {
	pid := os.Getpid()
	start, _ := startTime(pid)
	return owner{pid: pid, start: start}
}

// String is the owner file's content: "pid start".
func (o owner) String() string { return fmt.Sprintf("%d %d\n", o.pid, o.start) }

// parseOwner reads an owner file's content.
func parseOwner(b []byte) (owner, error) {
	f := strings.Fields(string(b))
	if len(f) == 0 || len(f) > 2 {
		return owner{}, fmt.Errorf("owner %q: want \"pid start\"", b)
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil || pid <= 0 {
		return owner{}, fmt.Errorf("owner %q: bad pid", b)
	}
	o := owner{pid: pid}
	if len(f) == 2 {
		if o.start, err = strconv.ParseUint(f[1], 10, 64); err != nil {
			return owner{}, fmt.Errorf("owner %q: bad start time", b)
		}
	}
	return o, nil
}

// alive reports whether the owner still runs: its process exists, is not
// a zombie, and started when the owner did (when both start times are
// known). Without /proc, a process that exists counts as alive.
func (o owner) alive() bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(o.pid), "stat"))
	if err != nil {
		if _, serr := os.Stat("/proc/self/stat"); serr != nil { // no /proc here
			err := syscall.Kill(o.pid, 0)
			return err == nil || errors.Is(err, syscall.EPERM)
		}
		return false
	}
	state, start, ok := parseStat(stat)
	if !ok {
		return true // unreadable: keep what may be in use
	}
	return state != 'Z' && state != 'X' && (o.start == 0 || start == 0 || start == o.start)
}

// startTime is when process pid started, from /proc.
func startTime(pid int) (uint64, bool) {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, false
	}
	_, start, ok := parseStat(stat)
	return start, ok
}

// parseStat reads the state (field 3) and start time (field 22) of a
// /proc/PID/stat line; the command name before them may hold spaces and
// parentheses, so fields count from the last ") ".
func parseStat(b []byte) (state byte, start uint64, ok bool) {
	i := bytes.LastIndex(b, []byte(") "))
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return 0, 0, false
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], start, true
}

// legacyOwner finds the process that used a directory an older crawler
// made at the top of the temporary directory, without an owner file: a
// browser profile's SingletonLock names its browser ("host-pid"), a
// private redis-server's log its server ("pid=N"). False when the
// directory does not tell.
func legacyOwner(dir, name string) (owner, bool) {
	switch {
	case strings.HasPrefix(name, legacyBrowserPrefix):
		target, err := os.Readlink(filepath.Join(dir, "SingletonLock"))
		if err != nil {
			return owner{}, false
		}
		pid, err := strconv.Atoi(target[strings.LastIndexByte(target, '-')+1:])
		return owner{pid: pid}, err == nil && pid > 0
	case strings.HasPrefix(name, legacyRedisPrefix):
		f, err := os.Open(filepath.Join(dir, "redis.log"))
		if err != nil {
			return owner{}, false
		}
		defer f.Close()
		head := make([]byte, 8<<10)
		n, _ := f.Read(head)
		m := redisPID.FindSubmatch(head[:n])
		if m == nil {
			return owner{}, false
		}
		pid, err := strconv.Atoi(string(m[1]))
		return owner{pid: pid}, err == nil && pid > 0
	}
	return owner{}, false
}

// redisPID is how redis-server's log says its process ID at start.
var redisPID = regexp.MustCompile(`\bpid=(\d+)`)
