package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// Stages of a page's CPU, as --stages breaks it down: each sample of the
// crawler processes' CPU profiles goes to the stage of the innermost frame
// of its stack that names one (stageRules), so that an allocation or a
// system call counts where it was made; a sample with none is the Go
// runtime's own work (the collector's background marking, the scheduler)
// or other.
const (
	StageFetch      = "fetch"
	StageDecode     = "decode"
	StageParse      = "parse"
	StageExtract    = "extract"
	StageHash       = "hash"
	StageStore      = "store"
	StageCoordinate = "coordinate"
	StageRuntime    = "gc+sched"
	StageOther      = "other"
)

// Stages lists the stages in the order they are printed.
var Stages = []string{StageFetch, StageDecode, StageParse, StageExtract, StageHash, StageStore, StageCoordinate,
	StageRuntime, StageOther}

// stageRules map the function names of a frame to its stage, tried in
// order for each frame (the first rule that matches decides: the charset
// decoder is x/net/html's too, the content hash is the store's).
var stageRules = []struct {
	stage    string
	prefixes []string
}{
	{StageDecode, []string{"golang.org/x/net/html/charset.", "golang.org/x/text/", "github.com/crawler-dev/crawler/fetch.decodeCharset"}},
	{StageParse, []string{"golang.org/x/net/html.", "github.com/crawler-dev/crawler/extract.Parse", "github.com/crawler-dev/crawler/extract.newTree"}},
	{StageHash, []string{"github.com/crawler-dev/crawler/neardup.", "github.com/crawler-dev/crawler/store.ContentHash",
		"github.com/crawler-dev/crawler/slave.fieldSimhash", "github.com/crawler-dev/crawler/slave.(*committer).markNear"}},
	{StageExtract, []string{"github.com/crawler-dev/crawler/extract.", "github.com/antchfx/", "github.com/tidwall/",
		"github.com/andybalholm/cascadia"}},
	{StageStore, []string{"github.com/crawler-dev/crawler/store.", "github.com/crawler-dev/crawler/sink.",
		"go.mongodb.org/", "github.com/crawler-dev/crawler/slave.(*committer).save"}},
	{StageFetch, []string{"net/http.", "crypto/tls.", "compress/", "github.com/crawler-dev/crawler/fetch.",
		"github.com/crawler-dev/crawler/downloader.", "github.com/crawler-dev/crawler/politeness.",
		"github.com/crawler-dev/crawler/robots.", "github.com/crawler-dev/crawler/proxy."}},
	{StageCoordinate, []string{"github.com/redis/go-redis/", "github.com/crawler-dev/crawler/",
		"github.com/alicebob/miniredis"}},
	{StageRuntime, []string{"runtime.gcBgMarkWorker", "runtime.mcall", "runtime.morestack", "runtime.bgsweep",
		"runtime.bgscavenge", "runtime.sysmon", "runtime.gcenable", "runtime.mstart"}},
}

// StageCPU is CPU by stage, summed over profiles.
type StageCPU map[string]time.Duration

// Total is the CPU of every stage.
func (s StageCPU) Total() time.Duration {
	var t time.Duration
	for _, d := range s {
		t += d
	}
	return t
}

// add adds another breakdown's CPU.
func (s StageCPU) add(o StageCPU) {
	for k, d := range o {
		s[k] += d
	}
}

// stageOf is the stage of one sample's stack, innermost frame first.
func stageOf(s *profile.Sample) string {
	for _, loc := range s.Location {
		// A location's lines are its inlined calls, innermost first.
		for _, line := range loc.Line {
			if line.Function == nil {
				continue
			}
			if stage := stageOfFunc(line.Function.Name); stage != "" {
				return stage
			}
		}
	}
	return StageOther
}

// stageOfFunc is the stage a function's name marks, "" for none.
func stageOfFunc(name string) string {
	for _, r := range stageRules {
		for _, p := range r.prefixes {
			if strings.HasPrefix(name, p) {
				return r.stage
			}
		}
	}
	return ""
}

// profileStages reads a CPU profile and sums its samples by stage.
func profileStages(path string) (StageCPU, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("cpu profile %s: %w", path, err)
	}
	cpu := -1 // the sample value in nanoseconds
	for i, st := range p.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			cpu = i
		}
	}
	if cpu < 0 {
		return nil, fmt.Errorf("cpu profile %s: no cpu/nanoseconds samples", path)
	}
	out := StageCPU{}
	for _, s := range p.Sample {
		out[stageOf(s)] += time.Duration(s.Value[cpu])
	}
	return out, nil
}

// dirStages sums the stages of every CPU profile (*.pprof) in dir: the
// processes of one crawl.
func dirStages(dir string) (StageCPU, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.pprof"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no cpu profile in %s", dir)
	}
	out := StageCPU{}
	for _, p := range paths {
		s, err := profileStages(p)
		if err != nil {
			return nil, err
		}
		out.add(s)
	}
	return out, nil
}

// stageTable is the crawlers' CPU per page by stage at latency l, from
// the profiles of every round (nil without Stages).
func stageTable(rep SiteReport, l time.Duration) *Table {
	if !rep.Opts.Stages {
		return nil
	}
	t := &Table{
		Caption: fmt.Sprintf("One site, %v latency: crawler CPU per page by stage, profiled (--stages), every round's "+
			"processes summed.", l),
		Header: append(append([]string{"crawler"}, Stages...), "profiled", "measured"),
		Notes: []string{
			"Each sample of the processes' CPU profiles (crawler --cpu-profile, 100 a second) counts for the stage of " +
				"the innermost function of its stack that names one, so an allocation or a system call counts where it " +
				"was made: fetch (net/http, fetch, downloader, politeness, robots), decode (charset), parse (x/net/html, " +
				"extract.Parse and its index), extract (selectors, JSON, conversions), hash (simhash, content hash, " +
				"near-duplicate index), store (the item store and sinks), coordinate (Redis, queues, ledger, dedup, " +
				"routing, the roles' own code); gc+sched is the runtime's background work (the collector's marking, " +
				"the scheduler), other what names none.",
			"profiled: the stages summed, per page; measured: the CPU per page of the first table (/proc, the " +
				"profiler's own signal handling included). A cluster's profiles cover each process's whole run, its " +
				"start and idle settling too; a profile misses what the process did between two of its samples.",
		},
	}
	for _, name := range []string{CrawlerCluster, CrawlerRun} {
		if row := stageRow(rep, name, l); row != nil {
			t.AddRow(row...)
		}
	}
	return t
}

// stageRow is one crawler's row of stageTable, nil when it has no profiles.
func stageRow(rep SiteReport, name string, l time.Duration) []string {
	sum, stored := StageCPU{}, int64(0)
	var measured time.Duration
	for _, r := range rep.runsOf(name, l) {
		if r.Stages == nil {
			continue
		}
		sum.add(r.Stages)
		stored += max(r.Stored, 1)
		measured += r.CrawlerCPU
	}
	if stored == 0 {
		return nil
	}
	perPage := func(d time.Duration) string { return fmt.Sprintf("%.3f ms", msOf(d)/float64(stored)) }
	row := []string{crawlerLabel(name, rep.Opts)}
	for _, s := range Stages {
		row = append(row, perPage(sum[s]))
	}
	return append(row, perPage(sum.Total()), perPage(measured))
}
