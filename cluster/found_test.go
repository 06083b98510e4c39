package cluster

import (
	"reflect"
	"testing"

	"github.com/crawler-dev/crawler/jobspec"
)

// TestTask_kindWire: tasks and list pages written before kinds decode as
// the short form's kinds (detail, start); those with a kind keep it.
func TestTask_kindWire(t *testing.T) {
	old, err := DecodeTask(`{"u":"https://a.example/p/1","f":"ab","j":"j","n":1}`)
	if err != nil || old.ItemKind() != jobspec.KindDetail {
		t.Errorf("old task: %+v %v, want kind detail", old, err)
	}
	task := Task{URL: "https://a.example/p/1", FP: "ab", Job: "j", Kind: "product"}
	if got, err := DecodeTask(task.Encode()); err != nil || got.ItemKind() != "product" {
		t.Errorf("task round trip: %+v %v", got, err)
	}
	page, err := DecodeListPage(`{"u":"https://a.example/","d":0}`)
	if err != nil || page.PageKind() != jobspec.KindStart || page.Sitemap != 0 {
		t.Errorf("old list page: %+v %v, want kind start", page, err)
	}
	sm := ListPage{URL: "https://a.example/sitemap.xml", Kind: "product", Sitemap: 2}
	if got, err := DecodeListPage(sm.Encode()); err != nil || got != sm {
		t.Errorf("sitemaps entry round trip: %+v %v", got, err)
	}
}

// TestFoundLinks_wire: a Found entry round-trips; one without its page or
// kind is refused.
func TestFoundLinks_wire(t *testing.T) {
	f := FoundLinks{Page: "https://a.example/p/1", Kind: "product", Round: 2,
		Links: []FoundLink{{URL: "https://a.example/p/2", Kind: "product"}}, RuleFound: []int{1, 0}, Empty: []string{"brand"}}
	got, err := DecodeFoundLinks(f.Encode())
	if err != nil || !reflect.DeepEqual(got, f) {
		t.Errorf("round trip = %+v %v, want %+v", got, err, f)
	}
	if _, err := DecodeFoundLinks(`{"k":"product"}`); err == nil {
		t.Error("a Found entry without its page decoded")
	}
}
