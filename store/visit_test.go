package store

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/jobspec"
)

// visitStore is a store that records visits: Mongo, File.
type visitStore interface {
	Validators(ctx context.Context, ids []string) (map[string]Stored, error)
	SaveVisits(ctx context.Context, now time.Time, visits []Visit) []VisitResult
}

func visitItem(fp string, round int64, title, etag string) Item {
	return Item{ID: ItemID("shop", fp), URL: "https://shop.example/" + fp, Job: "shop", Fingerprint: fp, Round: round,
		Fields: map[string]any{"title": title}, Status: 200, ETag: etag}
}

// saveVisits records visits and fails the test on any error; it returns
// what each found and the version it reported ("changed v2").
func saveVisits(t testing.TB, s visitStore, now time.Time, visits ...Visit) []string {
	t.Helper()
	var out []string
	for i, r := range s.SaveVisits(testCtx(t), now, visits) {
		if r.Err != nil {
			t.Fatalf("visit %s: %v", visits[i].Item.ID, r.Err)
		}
		out = append(out, fmt.Sprintf("%s v%d", r.Change, r.Version))
	}
	return out
}

func wantChanges(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: %v, want %v", what, got, want)
	}
}

// checkVisits runs two rounds over three pages and a redelivery of round 2,
// and checks what each found and what is stored.
func checkVisits(t *testing.T, s visitStore, read func(id string) Item) {
	t1 := time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC)
	t2, t3 := t1.Add(24*time.Hour), t1.Add(25*time.Hour)
	a, b, c := visitItem("a", 1, "A", `"a1"`), visitItem("b", 1, "B", ""), visitItem("c", 1, "C", `"c1"`)
	wantChanges(t, "round 1", saveVisits(t, s, t1, Visit{Item: a}, Visit{Item: b}, Visit{Item: c}),
		"new v1", "new v1", "new v1")

	got, err := s.Validators(testCtx(t), []string{a.ID, b.ID, c.ID, ItemID("shop", "none")})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[a.ID].ETag != `"a1"` || got[c.ID].Version != 1 || got[b.ID].ContentHash == "" {
		t.Fatalf("validators after round 1: %+v", got)
	}

	a2 := visitItem("a", 2, "A, new price", `"a2"`)
	b2 := visitItem("b", 2, "B", "")
	c2 := Item{ID: c.ID, URL: c.URL, Job: "shop", Fingerprint: "c", Round: 2, ETag: `"c1"`}
	round2 := []Visit{{Item: a2}, {Item: b2}, {Item: c2, NotModified: true}}
	looked := make([]Visit, len(round2)) // as a slave sends them: what it read before fetching
	for i, v := range round2 {
		p := got[v.Item.ID]
		looked[i], looked[i].Looked, looked[i].Prev = v, true, &p
	}
	wantChanges(t, "round 2", saveVisits(t, s, t2, looked...), "changed v2", "unchanged v1", "not_modified v1")
	// The slave died before acknowledging: the same round again bumps
	// nothing (and a store that was not told what it holds reads it).
	// A 304 told nothing of what is stored may not know its version.
	again := saveVisits(t, s, t3, round2...)
	again[2] = strings.Fields(again[2])[0]
	wantChanges(t, "round 2 again", again, "changed v2", "unchanged v1", "not_modified")

	ga, gb, gc := read(a.ID), read(b.ID), read(c.ID)
	if ga.Version != 2 || ga.Fields["title"] != "A, new price" || ga.ETag != `"a2"` || !ga.ChangedAt.Equal(t2) ||
		!ga.FirstSeenAt.Equal(t1) {
		t.Errorf("changed item: version %d, fields %v, etag %s, changed %s, first seen %s",
			ga.Version, ga.Fields, ga.ETag, ga.ChangedAt, ga.FirstSeenAt)
	}
	for _, it := range []Item{gb, gc} {
		if it.Version != 1 || !it.ChangedAt.Equal(t1) || it.Round != 1 || it.Fields["title"] == nil {
			t.Errorf("item %s rewritten: version %d, changed %s, round %d, fields %v", it.ID, it.Version, it.ChangedAt,
				it.Round, it.Fields)
		}
	}
}

func TestMongo_SaveVisits(t *testing.T) {
	m, _ := openTestMongo(t)
	checkVisits(t, m, func(id string) Item {
		var it Item
		if err := m.items.FindOne(testCtx(t), map[string]string{"_id": id}).Decode(&it); err != nil {
			t.Fatalf("read %s: %v", id, err)
		}
		if !it.CheckedAt.After(it.FirstSeenAt) {
			t.Errorf("item %s: checked_at %s not rewritten", id, it.CheckedAt)
		}
		return it
	})
}

// The validators of more pages than one query takes come back whole.
func TestMongo_ValidatorsInChunks(t *testing.T) {
	m, _ := openTestMongo(t)
	var visits []Visit
	var ids []string
	for i := range validatorsChunk + 10 {
		it := visitItem(fmt.Sprintf("p%d", i), 1, "T", fmt.Sprintf(`"e%d"`, i))
		visits = append(visits, Visit{Item: it})
		ids = append(ids, it.ID)
	}
	saveVisits(t, m, time.Now().UTC(), visits...)
	got, err := m.Validators(testCtx(t), ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ids) || got[ids[len(ids)-1]].ETag != fmt.Sprintf(`"e%d"`, len(ids)-1) {
		t.Fatalf("got %d validators, want %d", len(got), len(ids))
	}
}

func TestContentHashOfFieldsOnly(t *testing.T) {
	x := ContentHash(map[string]any{"title": "T", "price": 3.5})
	if y := ContentHash(map[string]any{"price": 3.5, "title": "T"}); x != y || x == "" {
		t.Fatalf("same fields hash %q and %q", x, y)
	}
	if z := ContentHash(map[string]any{"title": "T", "price": 3.6}); z == x {
		t.Fatal("different fields hash the same")
	}
}

// lastRecords reads the last JSON Lines record of each page in path.
func lastRecords(t *testing.T, path string) map[string]Item {
	t.Helper()
	out := map[string]Item{}
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, path)), "\n") {
		var it Item
		if err := json.Unmarshal([]byte(line), &it); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		out[it.ID] = it
	}
	return out
}

func TestFile_SaveVisits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "items.jsonl")
	f, err := OpenFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	checkVisits(t, f, func(id string) Item { return lastRecords(t, path)[id] })
	if n := len(strings.Split(strings.TrimSpace(readFile(t, path)), "\n")); n != 4 {
		t.Errorf("the file holds %d records, want 4: three of round 1, the changed page of round 2", n)
	}
}

// A reopened file knows the validators and versions it holds.
func TestFile_ValidatorsAfterReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "items.jsonl")
	f, err := OpenFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := visitItem("a", 1, "A", `"a1"`)
	saveVisits(t, f, time.Now().UTC(), Visit{Item: a})
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if f, err = OpenFile(path, nil); err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := f.Validators(testCtx(t), []string{a.ID})
	if err != nil || got[a.ID].ETag != `"a1"` || got[a.ID].Version != 1 {
		t.Fatalf("validators after reopen: %+v, %v", got, err)
	}
	wantChanges(t, "round 2", saveVisits(t, f, time.Now().UTC(), Visit{Item: visitItem("a", 2, "A", `"a1"`)}),
		"unchanged v1")
}

// checkSchedule records visits of one page under an adaptive re-crawl
// (1h to 4h) and checks the schedule Validators reads back after each: a
// new page starts at the least interval, one unchanged (or 304) doubles
// it up to the most, a changed one halves it; a touch writes it too.
func checkSchedule(t *testing.T, s visitStore) {
	sched := &jobspec.Recrawl{Mode: jobspec.RecrawlAdaptive, Min: jobspec.Duration(time.Hour), Max: jobspec.Duration(4 * time.Hour)}
	t0 := time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC)
	id := ItemID("shop", "s")
	for i, step := range []struct {
		title       string
		notModified bool
		want        string
		every       time.Duration
	}{
		{"S", false, "new", time.Hour},
		{"S", false, "unchanged", 2 * time.Hour},
		{"", true, "not_modified", 4 * time.Hour},
		{"S", false, "unchanged", 4 * time.Hour},
		{"S, new price", false, "changed", 2 * time.Hour},
	} {
		now := t0.Add(time.Duration(i) * 24 * time.Hour)
		prevs, err := s.Validators(testCtx(t), []string{id})
		if err != nil {
			t.Fatal(err)
		}
		v := Visit{Item: visitItem("s", int64(i+1), step.title, `"s"`), NotModified: step.notModified, Looked: true, Schedule: sched}
		if p, ok := prevs[id]; ok {
			v.Prev = &p
		}
		if step.notModified {
			v.Item.Fields = nil
		}
		got := saveVisits(t, s, now, v)
		if !strings.HasPrefix(got[0], step.want) {
			t.Fatalf("visit %d found %s, want %s", i+1, got[0], step.want)
		}
		after, err := s.Validators(testCtx(t), []string{id})
		if err != nil {
			t.Fatal(err)
		}
		if st := after[id]; st.CheckEvery != int64(step.every/time.Second) || !st.NextCheckAt.Equal(now.Add(step.every)) {
			t.Errorf("after visit %d (%s): every %ds, next %s; want %s, %s", i+1, step.want, st.CheckEvery,
				st.NextCheckAt, step.every, now.Add(step.every))
		}
	}
}

func TestMongo_SaveVisitsSchedule(t *testing.T) {
	m, _ := openTestMongo(t)
	checkSchedule(t, m)
}

func TestFile_SaveVisitsSchedule(t *testing.T) {
	f, err := OpenFile(filepath.Join(t.TempDir(), "items.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	checkSchedule(t, f)
}
