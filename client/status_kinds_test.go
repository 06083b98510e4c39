package client

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/jobspec"
)

// kindsJob is a job of a list kind and two item kinds, parsed as a user
// writes it.
const kindsJob = `
name: kinds
seeds: ["http://127.0.0.1/"]
kinds:
  start:
    links:
      - {css: "a.book", kind: book}
      - {css: "a.author", kind: author}
  book:
    item: true
    fields:
      title: {css: "h1"}
  author:
    item: true
    fields:
      name: {css: "h2"}
`

// TestKindStatus: what status says of each kind, from the counters the
// master and slaves keep in the job's stats hash.
func TestKindStatus(t *testing.T) {
	spec, err := jobspec.Parse(strings.NewReader(kindsJob))
	if err != nil {
		t.Fatal(err)
	}
	stats := func(kv ...any) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = strconv.Itoa(kv[i+1].(int))
		}
		return m
	}
	job := Counters{Discovered: 99, Stored: 99} // not what item kinds read when there are two
	t.Run("each item kind its own counters; a recovered failure is not failed", func(t *testing.T) {
		got, warnings := kindStatus(spec, stats(
			cluster.KindStat("book", cluster.KindRouted), 10, cluster.KindStat("book", cluster.KindDuplicates), 3,
			cluster.KindStat("book", cluster.KindStored), 8, cluster.KindStat("book", cluster.KindFailed), 3,
			cluster.KindStat("book", cluster.KindRecovered), 1,
			cluster.KindStat("author", cluster.KindRouted), 4, cluster.KindStat("author", cluster.KindStored), 3,
			cluster.KindStat("author", cluster.KindCancelled), 1,
			cluster.KindStat("start", cluster.KindDiscovered), 1, cluster.KindPagesStat("start"), 1,
			cluster.RuleFoundStat("start", 0), 13, cluster.RuleFoundStat("start", 1), 4,
		), job)
		want := map[string]KindCounts{
			"start":  {Discovered: 1, Stored: 1},
			"book":   {Discovered: 13, Stored: 8, Failed: 2, Duplicates: 3},
			"author": {Discovered: 4, Stored: 3, Cancelled: 1},
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("kinds = %+v\nwant %+v", got, want)
		}
		if len(warnings) != 0 {
			t.Fatalf("warnings = %q, want none", warnings)
		}
	})
	t.Run("a rule and a field that matched nothing are named by their path", func(t *testing.T) {
		_, warnings := kindStatus(spec, stats(
			cluster.KindPagesStat("start"), 2, cluster.RuleFoundStat("start", 0), 5,
			cluster.KindPagesStat("author"), 3, cluster.FieldEmptyStat("author", "name"), 3,
		), job)
		want := []string{
			"kinds.author.fields.name: matched nothing on 3 pages of kind author",
			"kinds.start.links[1]: matched nothing on 2 pages of kind start",
		}
		if !reflect.DeepEqual(warnings, want) {
			t.Fatalf("warnings = %q\nwant %q", warnings, want)
		}
	})
	t.Run("no warning before a page of the kind is read", func(t *testing.T) {
		if _, warnings := kindStatus(spec, stats(), job); len(warnings) != 0 {
			t.Fatalf("warnings = %q, want none", warnings)
		}
	})
}

// TestKindStatus_shortForm: a job in the short form has no kinds to list,
// and its warnings name next_link and detail_link as the user wrote them.
func TestKindStatus_shortForm(t *testing.T) {
	spec := testJob("short", "http://127.0.0.1/")
	spec.NextLink = &jobspec.LinkRule{CSS: "a.next"}
	spec.ApplyDefaults()
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	start := ""
	for name, k := range spec.PageKinds() {
		if !k.Item {
			start = name
		}
	}
	kinds, warnings := kindStatus(spec, map[string]string{cluster.KindPagesStat(start): "4"}, Counters{})
	if kinds != nil {
		t.Fatalf("kinds = %+v, want none for the short form", kinds)
	}
	want := []string{
		"detail_link: matched nothing on 4 pages of kind " + start,
		"next_link: matched nothing on 4 pages of kind " + start,
	}
	if !reflect.DeepEqual(warnings, want) {
		t.Fatalf("warnings = %q\nwant %q", warnings, want)
	}
}
