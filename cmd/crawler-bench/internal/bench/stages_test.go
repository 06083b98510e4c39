package bench

import (
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/extract"
)

// TestStageOfFunc: each stage's functions go to it, the specific rules
// before the general ones (the charset decoder is x/net/html's, the content
// hash the store's, the roles' own code coordination).
func TestStageOfFunc(t *testing.T) {
	for name, want := range map[string]string{
		"golang.org/x/net/html.(*Tokenizer).Next":                      StageParse,
		"golang.org/x/net/html/charset.NewReaderLabel":                 StageDecode,
		"github.com/crawler-dev/crawler/fetch.decodeCharset":           StageDecode,
		"github.com/crawler-dev/crawler/fetch.(*Fetcher).attempt":      StageFetch,
		"net/http.(*persistConn).readLoop":                             StageFetch,
		"github.com/crawler-dev/crawler/extract.(*page).field":         StageExtract,
		"github.com/crawler-dev/crawler/extract.newTree":               StageParse,
		"github.com/crawler-dev/crawler/store.ContentHash":             StageHash,
		"github.com/crawler-dev/crawler/neardup.(*Hasher).WriteString": StageHash,
		"github.com/crawler-dev/crawler/store.(*File).SaveVisits":      StageStore,
		"github.com/redis/go-redis/v9.(*baseClient).process":           StageCoordinate,
		"github.com/crawler-dev/crawler/slave.(*acker).run":            StageCoordinate,
		"runtime.gcBgMarkWorker":                                       StageRuntime,
		"runtime.mallocgc":                                             "",
		"syscall.Syscall6":                                             "",
	} {
		if got := stageOfFunc(name); got != want {
			t.Errorf("stageOfFunc(%s) = %q, want %q", name, got, want)
		}
	}
}

// TestProfileStages profiles this process parsing pages and reads the
// profile back: the parse stage holds most of what the stages name.
func TestProfileStages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test.pprof")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		t.Fatal(err)
	}
	page := []byte("<html><body>" + strings.Repeat(`<div class="item"><a href="/d/1">one</a><p>text</p></div>`, 2000) + "</body></html>")
	for start := time.Now(); time.Since(start) < 500*time.Millisecond; {
		if _, err := extract.Parse("http://127.0.0.1/", page); err != nil {
			t.Fatal(err)
		}
	}
	pprof.StopCPUProfile()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	stages, err := dirStages(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	// Samples taken inside the race detector's runtime (-race) have no Go
	// frames to name a stage by: they are other.
	if named := stages.Total() - stages[StageOther]; named == 0 || stages[StageParse] < named/2 {
		t.Errorf("stages %v: want most of the %v the stages name in parse", stages, named)
	}
	if _, err := dirStages(t.TempDir()); err == nil {
		t.Error("dirStages of a directory without profiles: no error")
	}
}
