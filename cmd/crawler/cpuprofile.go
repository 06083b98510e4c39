package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// cpuProfile writes a CPU profile of the whole process, from its flags
// resolved to its exit, for the benchmarks' breakdown of a page's CPU by
// stage (crawler-bench site --stages). A hidden flag: --pprof serves the
// same profiles over HTTP for a person; a process that exits when its
// crawl ends cannot be asked for one.
type cpuProfile struct {
	path string
	f    *os.File
}

// start begins the profile when a path is set.
func (p *cpuProfile) start() error {
	if p.path == "" || p.f != nil {
		return nil
	}
	f, err := os.Create(p.path)
	if err != nil {
		return fmt.Errorf("--cpu-profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("--cpu-profile: %w", err)
	}
	p.f = f
	return nil
}

// stop ends the profile and closes its file.
func (p *cpuProfile) stop() {
	if p.f == nil {
		return
	}
	pprof.StopCPUProfile()
	if err := p.f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "crawler: --cpu-profile:", err)
	}
	p.f = nil
}
