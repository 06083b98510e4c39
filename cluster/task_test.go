package cluster

import (
	"strings"
	"testing"
)

func TestTask_Encode(t *testing.T) {
	t.Run("round trip", func(t *testing.T) {
		for _, task := range []Task{
			{URL: "https://example.com/a?b=1", FP: "ab12", Job: "news"},
			{URL: "https://example.com/页", FP: "ff00", Job: "j-1", Referer: "https://example.com/list/1", Round: 7, Retry: true},
		} {
			got, err := DecodeTask(task.Encode())
			if err != nil {
				t.Fatalf("DecodeTask(%s): %v", task.Encode(), err)
			}
			if got != task {
				t.Errorf("round trip = %+v, want %+v", got, task)
			}
		}
	})
	t.Run("wire form is compact", func(t *testing.T) {
		got := Task{URL: "u", FP: "f", Job: "j"}.Encode()
		if want := `{"u":"u","f":"f","j":"j"}`; got != want {
			t.Errorf("Encode = %s, want %s", got, want)
		}
	})
	t.Run("errors", func(t *testing.T) {
		for _, in := range []string{"", "not json", `{"u":"x","f":"y"}`, `{"f":"y","j":"z"}`, `{"u":"x","j":"z"}`, `[1,2]`} {
			if got, err := DecodeTask(in); err == nil {
				t.Errorf("DecodeTask(%q) = %+v, want an error", in, got)
			} else if !strings.Contains(err.Error(), "decode task") {
				t.Errorf("DecodeTask(%q) error %q lacks context", in, err)
			}
		}
	})
}

func TestListPage_Encode(t *testing.T) {
	t.Run("round trip", func(t *testing.T) {
		for _, p := range []ListPage{{URL: "https://example.com/list/1"}, {URL: "https://example.com/list/9", Depth: 8}} {
			got, err := DecodeListPage(p.Encode())
			if err != nil {
				t.Fatalf("DecodeListPage(%s): %v", p.Encode(), err)
			}
			if got != p {
				t.Errorf("round trip = %+v, want %+v", got, p)
			}
		}
	})
	t.Run("errors", func(t *testing.T) {
		for _, in := range []string{"", "{", `{"d":3}`, `{"u":""}`} {
			if got, err := DecodeListPage(in); err == nil {
				t.Errorf("DecodeListPage(%q) = %+v, want an error", in, got)
			}
		}
	})
}

// TestTaskRetryMarker: scripts find retried tasks by TaskRetryMarker in
// their wire form; it must show in exactly those.
func TestTaskRetryMarker(t *testing.T) {
	task := Task{URL: "http://a.example/x", FP: "ab", Job: "j", Round: 3}
	if strings.Contains(task.Encode(), TaskRetryMarker) {
		t.Errorf("%s carries the retry marker %s", task.Encode(), TaskRetryMarker)
	}
	task.Retry = true
	if !strings.Contains(task.Encode(), TaskRetryMarker) {
		t.Errorf("%s lacks the retry marker %s", task.Encode(), TaskRetryMarker)
	}
}
