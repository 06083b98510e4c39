package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"testing"
	"time"
)

// itemJSONCases are items whose lines the appender must write as
// encoding/json does: every optional field set and unset, every type a
// field value takes, strings json escapes.
func itemJSONCases() []Item {
	at := time.Date(2026, 11, 29, 17, 4, 5, 123456789, time.UTC)
	east := time.FixedZone("east", 5*3600+1800)
	full := Item{URL: "http://127.0.0.1/a?b=1&c=<2>", FinalURL: "http://127.0.0.1/final", Job: "job", Kind: "product",
		Fields: map[string]any{
			"title": "Ünïcode \u2028 \u2029 \x00\x1f\x7f \b\f\n\r\t \"q\" \\ <b>&amp;</b> \xff\xfe bad",
			"tags":  []string{"a", "", "<c>"}, "none": nil, "n": 1299.5, "big": 1e21, "small": 1e-7, "neg": math.Copysign(0, -1),
			"int": int64(-42), "i": 7, "yes": true, "no": false, "mixed": []any{1.5, int64(2), "x", nil, true, []string{"y"}},
			"empty": []string{}, "nilstrings": []string(nil), "nilany": []any(nil), "nested": map[string]any{"b": 1, "a": "<"},
			"z\u00e9": "key not ASCII", "<k>": "key json escapes",
		},
		FetchedAt: at, Status: 200, Fingerprint: "ab12", Round: 3, Simhash: math.MinInt64, NearDuplicateOf: "job:cd34",
		Referer: "http://127.0.0.1/list", Slave: 2, ETag: `W/"x"`, LastModified: "Sun, 29 Nov 2026 17:04:05 GMT",
		ContentHash: "ffee", Version: 4, FirstSeenAt: at.Add(-time.Hour), ChangedAt: at.In(east), CheckedAt: at,
		ChangedRound: 2, CheckEvery: 3600, NextCheckAt: at.Add(time.Hour)}
	return []Item{
		{},
		{URL: "u", Job: "j", Fields: map[string]any{}, FetchedAt: at},
		{URL: "u", Job: "j", Fields: map[string]any{"t": "x"}, FetchedAt: time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), Round: -1},
		full,
	}
}

// TestAppendItemJSON_SameAsEncodingJSON holds the appender to
// json.Marshal's bytes, and the file's record to Encode's line.
func TestAppendItemJSON_SameAsEncodingJSON(t *testing.T) {
	for i, it := range itemJSONCases() {
		checkItemJSON(t, i, it)
	}
}

// TestAppendItemJSON_Refuses checks that what json refuses, or what the
// appender does not know, is left to encoding/json: the record is then
// json's (or json's error).
func TestAppendItemJSON_Refuses(t *testing.T) {
	type price struct{ Amount int }
	for name, it := range map[string]Item{
		"NaN":          {Fields: map[string]any{"n": math.NaN()}},
		"infinity":     {Fields: map[string]any{"n": []any{math.Inf(1)}}},
		"year 10000":   {FetchedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		"checked -1":   {CheckedAt: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)},
		"channel":      {Fields: map[string]any{"c": make(chan int)}},
		"next in 1e4y": {NextCheckAt: time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		if _, ok := appendItemJSON(nil, it); ok {
			t.Errorf("%s: the appender wrote an item json refuses", name)
		}
		var buf bytes.Buffer
		if err := jsonRecord(&buf, it); err == nil {
			t.Errorf("%s: jsonRecord wrote %s, json refuses it", name, buf.Bytes())
		}
	}
	// A type the appender does not know is written by json, inside the
	// appender's line.
	checkItemJSON(t, 0, Item{Fields: map[string]any{"p": price{Amount: 3}, "f32": float32(0.1)}})
}

// FuzzAppendItemJSON holds the appender to json.Marshal on fuzzed
// strings, numbers and times.
func FuzzAppendItemJSON(f *testing.F) {
	f.Add("title <b>", "http://127.0.0.1/a&b", "\u2028\xff", 1299.5, int64(7), int64(1764435845), int64(5))
	f.Add("", "", "", 1e-7, int64(-1), int64(0), int64(0))
	f.Add("é\x00", "\"", "\\", 1e21, int64(math.MaxInt64), int64(-62135596800), int64(999999999))
	f.Fuzz(func(t *testing.T, s1, s2, s3 string, num float64, n, sec, nsec int64) {
		at := time.Unix(sec, nsec).UTC()
		it := Item{URL: s2, FinalURL: s3, Job: s1, Kind: s3, Fingerprint: s1, Referer: s2, ETag: s3,
			Fields:    map[string]any{s1: s2, s2: []string{s3, s1}, s3: num, "n": n, "l": []any{num, s1, n}},
			FetchedAt: at, Round: n, Simhash: n, Version: n, CheckedAt: at, NextCheckAt: at.Add(time.Duration(n))}
		want, err := json.Marshal(it)
		got, ok := appendItemJSON(nil, it)
		switch {
		case err != nil && ok:
			t.Fatalf("json refuses the item (%v), the appender wrote %s", err, got)
		case err == nil && !ok:
			t.Fatalf("the appender refused an item json writes: %s", want)
		case ok && !bytes.Equal(got, want):
			t.Fatalf("appender:\n%s\njson:\n%s", got, want)
		}
		if ok && ContentHash(it.Fields) != jsonContentHash(t, it.Fields) {
			t.Fatalf("content hash of %v differs from json's", it.Fields)
		}
	})
}

// checkItemJSON compares the appender, the file's record and the content
// hash with encoding/json's for one item.
func checkItemJSON(t *testing.T, i int, it Item) {
	t.Helper()
	want, err := json.Marshal(it)
	if err != nil {
		t.Fatalf("case %d: json.Marshal: %v", i, err)
	}
	var buf bytes.Buffer
	if err := jsonRecord(&buf, it); err != nil {
		t.Fatalf("case %d: jsonRecord: %v", i, err)
	}
	if !bytes.Equal(buf.Bytes(), append(want, '\n')) {
		t.Errorf("case %d: record\n%s\njson.Marshal\n%s", i, buf.Bytes(), want)
	}
	if got, want := ContentHash(it.Fields), jsonContentHash(t, it.Fields); got != want {
		t.Errorf("case %d: content hash %s, json's %s", i, got, want)
	}
}

// jsonContentHash is ContentHash as encoding/json computes it.
func jsonContentHash(t *testing.T, fields map[string]any) string {
	t.Helper()
	b, err := json.Marshal(fields)
	if err != nil {
		return ""
	}
	return sha256Hex(b)
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
