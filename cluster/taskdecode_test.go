package cluster

import (
	"encoding/json"
	"testing"
)

// checkTaskDecode holds decodeTaskFast to json.Unmarshal on s: where the
// fast path reads s, json reads it alike.
func checkTaskDecode(t *testing.T, s string) (fast bool) {
	t.Helper()
	got, ok := decodeTaskFast(s)
	if !ok {
		return false
	}
	var want Task
	if err := json.Unmarshal([]byte(s), &want); err != nil {
		t.Fatalf("the fast path read %q, json refuses it: %v", s, err)
	}
	if got != want {
		t.Fatalf("%q: fast path %+v, json %+v", s, got, want)
	}
	return true
}

// TestDecodeTaskFast_SameAsJSON: every task Encode writes without escapes
// is read by the fast path as json reads it; the others, and anything
// Encode does not write, are left to json.
func TestDecodeTaskFast_SameAsJSON(t *testing.T) {
	plain := []Task{
		{URL: "http://127.0.0.1/detail/7", FP: "ab12", Job: "news"},
		{URL: "http://127.0.0.1/d/é中", FP: "f", Job: "j", Referer: "http://127.0.0.1/list/1", Round: 12, Retry: true, Kind: "product"},
		{URL: "u", FP: "f", Job: "j", Round: -3},
		{URL: "u", FP: "f", Job: "j", Kind: "product", Priority: -7},
		{URL: "u", FP: "f", Job: "j", Priority: 100},
	}
	for _, task := range plain {
		if s := task.Encode(); !checkTaskDecode(t, s) {
			t.Errorf("the fast path left %q to json", s)
		}
	}
	for _, s := range []string{
		Task{URL: "http://127.0.0.1/a?b=1&c=<2>", FP: "f", Job: "j"}.Encode(), // & < > written \u0026 ...
		`{"u":"a\"b\\c\/d\b\f\n\r\t\u00e9\u4E2D\u0000\u2028","f":"f","j":"j"}`,
	} {
		if !checkTaskDecode(t, s) {
			t.Errorf("the fast path left %q to json", s)
		}
	}
	for _, s := range []string{
		`{"u":"\ud83d\ude00","f":"f","j":"j"}`, `{"u":"\ud83d"}`, `{"u":"a\x"}`, `{"u":"a\u12"}`, `{"u":"a\u12g4"}`,
		`{"u":"a\"}`, `{"u":"a\u+123"}`, `{"u":"a","u":"b","f":"f","j":"j"}`, `{"u":"a","f":"f","j":"j","q":1}`,
		`{"u":"a", "f":"f","j":"j"}`, `{"u":"a","f":"f","j":"j"} `, `{"u":"a","n":01}`, `{"u":"a","n":1.5}`,
		`{"u":"a","n":99999999999999999999}`, `{"u":"a","x":null}`, `{"u":null}`, "{\"u\":\"a\xff\"}", "{\"u\":\"a\tb\"}",
		`{"u":"a"`, `{"u"}`, `{,}`, `[]`, ``, `{"U":"a"}`, `{"uu":"a"}`,
	} {
		if checkTaskDecode(t, s) {
			t.Errorf("the fast path read %q, which it should leave to json", s)
		}
	}
	for _, s := range []string{`{}`, `{"n":0,"x":false}`, `{"n":-0}`} {
		checkTaskDecode(t, s)
	}
}

// FuzzDecodeTask holds the fast path to json on fuzzed wire forms and
// tasks.
func FuzzDecodeTask(f *testing.F) {
	f.Add(`{"u":"http://127.0.0.1/d/1","f":"ab","j":"j","n":2,"x":true,"k":"p"}`, "u", int64(3))
	f.Add(`{"n":-0,"x":false}`, "\xff", int64(-1))
	f.Add(`{"u":"a\u0026b\ud83d\ude00\\"}`, "a&b<\u2028>\"\\\x01😀", int64(0))
	f.Fuzz(func(t *testing.T, s, str string, n int64) {
		checkTaskDecode(t, s)
		task := Task{URL: str, FP: str, Job: "j", Referer: str, Round: n, Retry: n%2 == 0, Kind: str, Priority: int(n % 101)}
		checkTaskDecode(t, task.Encode())
	})
}

// BenchmarkDecodeTask decodes a slave's task (its URL's query escaped),
// the fast path beside json.Unmarshal (the first way).
func BenchmarkDecodeTask(b *testing.B) {
	s := Task{URL: "http://127.0.0.1:8080/detail/1234?cat=tech&lang=en", FP: "9f86d081884c7d65", Job: "bench-site",
		Referer: "http://127.0.0.1:8080/list/17", Round: 1}.Encode()
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeTask(s); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var t Task
			if err := json.Unmarshal([]byte(s), &t); err != nil {
				b.Fatal(err)
			}
		}
	})
}
