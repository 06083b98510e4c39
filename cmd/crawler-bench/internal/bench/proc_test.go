package bench

import (
	"os"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	// The command name may hold spaces and parentheses: fields count from
	// the last ')'. utime=250 and stime=130 ticks.
	line := "4242 (my (odd) proc) S 1 4242 4242 0 -1 4194560 1 0 0 0 250 130 0 0 20 0 3 0 100 1000000 200 18446744073709551615\n"
	got, err := parseStatCPU([]byte(line))
	if err != nil || got != 3800*time.Millisecond {
		t.Errorf("parseStatCPU = %v, %v; want 3.8s", got, err)
	}
	for _, bad := range []string{"no name here", "1 (x) S 1 2"} {
		if _, err := parseStatCPU([]byte(bad)); err == nil {
			t.Errorf("parseStatCPU(%q) accepted it", bad)
		}
	}
}

func TestParseStatusKB(t *testing.T) {
	status := "Name:\tcrawler\nVmPeak:\t  900000 kB\nVmHWM:\t   51200 kB\nVmRSS:\t   40000 kB\n"
	if got, err := parseStatusKB([]byte(status), "VmHWM:"); err != nil || got != 50<<20 {
		t.Errorf("VmHWM = %d, %v; want 50 MiB", got, err)
	}
	if _, err := parseStatusKB([]byte(status), "VmSwap:"); err == nil {
		t.Errorf("a missing field was found")
	}
}

func TestProcReadings(t *testing.T) {
	before, err := procCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for start := time.Now(); time.Since(start) < 100*time.Millisecond; {
		x++ // burn CPU for longer than one clock tick
	}
	after, err := procCPU(os.Getpid())
	if err != nil || after <= before {
		t.Errorf("CPU time %v then %v (%v) after a busy loop of %d rounds", before, after, err, x)
	}
	rss, err := procPeakRSS(os.Getpid())
	if err != nil || rss < 1<<20 {
		t.Errorf("peak RSS of this test = %d, %v", rss, err)
	}
	if _, err := procCPU(-1); err == nil {
		t.Errorf("procCPU(-1) found a process")
	}
}
