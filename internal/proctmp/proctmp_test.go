package proctmp

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/crawler-dev/crawler/internal/testenv"
)

// mkdir makes base/name and writes the files given (a "->" prefix makes
// a symlink to the rest).
func mkdir(t *testing.T, base, name string, files map[string]string) {
	t.Helper()
	dir := filepath.Join(base, name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for f, content := range files {
		var err error
		if target, ok := strings.CutPrefix(content, "->"); ok {
			err = os.Symlink(target, filepath.Join(dir, f))
		} else {
			err = os.WriteFile(filepath.Join(dir, f), []byte(content), 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestSweep: a crawler's directory whose owner is gone is removed, with
// what it holds; one whose owner runs, or that does not say its owner,
// stays, as does any directory that is not a crawler's. An owner whose ID
// a later process took (its start time differs) is gone. The directories
// older crawlers made at the top say their process in a browser's
// SingletonLock or a redis-server's log.
func TestSweep(t *testing.T) {
	base := t.TempDir()
	dead, me := testenv.DeadPID(t), self()
	if me.start == 0 {
		t.Skip("no /proc start times here")
	}
	mkdir(t, base, Prefix+"dead", map[string]string{OwnerFile: owner{pid: dead, start: 1}.String(), "x": "data"})
	mkdir(t, base, Prefix+"live", map[string]string{OwnerFile: me.String()})
	mkdir(t, base, Prefix+"reused", map[string]string{OwnerFile: owner{pid: me.pid, start: me.start + 1}.String()})
	mkdir(t, base, Prefix+"unowned", nil)
	mkdir(t, base, Prefix+"garbled", map[string]string{OwnerFile: "not a pid"})
	mkdir(t, base, legacyBrowserPrefix+"dead", map[string]string{"SingletonLock": fmt.Sprintf("->host-%d", dead)})
	mkdir(t, base, legacyBrowserPrefix+"live", map[string]string{"SingletonLock": fmt.Sprintf("->host-%d", me.pid)})
	mkdir(t, base, legacyBrowserPrefix+"starting", nil)
	mkdir(t, base, legacyRedisPrefix+"dead", map[string]string{"redis.log": fmt.Sprintf("1:C 01 Jan 00:00:00.000 # Redis version=7.0.15, bits=64, pid=%d, just started\n", dead)})
	mkdir(t, base, legacyRedisPrefix+"nolog", nil)
	mkdir(t, base, "other-dead", map[string]string{OwnerFile: owner{pid: dead}.String()})

	removed, err := Sweep(base)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range removed {
		removed[i] = filepath.Base(r)
	}
	sort.Strings(removed)
	want := []string{legacyBrowserPrefix + "dead", Prefix + "dead", Prefix + "reused", legacyRedisPrefix + "dead"}
	sort.Strings(want)
	if fmt.Sprint(removed) != fmt.Sprint(want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	entries, _ := os.ReadDir(base)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	wantLeft := []string{legacyBrowserPrefix + "live", legacyBrowserPrefix + "starting", Prefix + "garbled", Prefix + "live",
		Prefix + "unowned", legacyRedisPrefix + "nolog", "other-dead"}
	sort.Strings(wantLeft)
	if fmt.Sprint(left) != fmt.Sprint(wantLeft) {
		t.Errorf("left %v, want %v", left, wantLeft)
	}
}

// TestOpen: a process's directory is made under base, names this process
// as its owner, and becomes TMPDIR, so the directories made with
// os.MkdirTemp("", …) go in it; Close removes it with them and gives
// TMPDIR back. Open sweeps base first.
func TestOpen(t *testing.T) {
	base := t.TempDir()
	t.Setenv("TMPDIR", "/before")
	mkdir(t, base, Prefix+"dead", map[string]string{OwnerFile: owner{pid: testenv.DeadPID(t)}.String()})
	d, err := Open(base)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Removed) != 1 || filepath.Base(d.Removed[0]) != Prefix+"dead" {
		t.Errorf("Open removed %v, want the dead owner's directory", d.Removed)
	}
	if filepath.Dir(d.Path) != base || !strings.HasPrefix(filepath.Base(d.Path), fmt.Sprintf("%s%d-", Prefix, os.Getpid())) {
		t.Errorf("directory %s, want %s%d-… in %s", d.Path, Prefix, os.Getpid(), base)
	}
	if b, err := os.ReadFile(filepath.Join(d.Path, OwnerFile)); err != nil || string(b) != self().String() {
		t.Errorf("owner file %q (%v), want %q", b, err, self().String())
	}
	sub, err := os.MkdirTemp("", legacyRedisPrefix)
	if err != nil || filepath.Dir(sub) != d.Path {
		t.Errorf("os.MkdirTemp made %s (%v), want it in %s", sub, err, d.Path)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d.Path); !os.IsNotExist(err) {
		t.Errorf("%s after Close: %v, want it gone", d.Path, err)
	}
	if got := os.Getenv("TMPDIR"); got != "/before" {
		t.Errorf("TMPDIR after Close = %q, want /before", got)
	}
}

// TestParseStat: the fields count from the command name's last ") ", so
// a name with spaces and parentheses does not shift them.
func TestParseStat(t *testing.T) {
	line := "4242 (evil) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10 18446744073709551615\n"
	state, start, ok := parseStat([]byte(line))
	if !ok || state != 'S' || start != 987654 {
		t.Errorf("parseStat = %c, %d, %v; want S, 987654, true", state, start, ok)
	}
}
