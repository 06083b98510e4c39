package store

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// The per-page path writes every item as a JSON line and hashes its fields
// as JSON (ContentHash): encoding/json spends most of that on reflection,
// on sorting the fields map through reflect values and on allocating. The
// appenders below write the same bytes as json.Marshal by hand for the
// types an item holds (strings, numbers, booleans, times, the extracted
// fields' strings, lists and converted values), and say when they meet
// anything else, which the caller then gives to encoding/json: what is
// written never depends on which of the two wrote it (itemjson_test.go
// holds them equal, fuzzed).

// appendItemJSON appends it as json.Marshal writes it; ok is false when
// it holds something the appender does not write (a field value of
// another type, a float json refuses, a time outside RFC 3339), and then
// dst's contents past its length are undefined.
func appendItemJSON(dst []byte, it Item) ([]byte, bool) {
	dst = appendKeyString(dst, '{', "url", it.URL)
	dst = appendOmitEmpty(dst, "final_url", it.FinalURL)
	dst = appendKeyString(dst, ',', "job", it.Job)
	dst = appendOmitEmpty(dst, "kind", it.Kind)
	dst = append(dst, `,"fields":`...)
	dst, ok := appendFieldsJSON(dst, it.Fields)
	if !ok {
		return dst, false
	}
	dst = append(dst, `,"fetched_at":`...)
	if dst, ok = appendTime(dst, it.FetchedAt); !ok {
		return dst, false
	}
	dst = appendKeyInt(dst, "status", int64(it.Status))
	dst = appendKeyString(dst, ',', "fingerprint", it.Fingerprint)
	dst = appendKeyInt(dst, "round", it.Round)
	dst = appendKeyInt(dst, "simhash", it.Simhash)
	dst = appendOmitEmpty(dst, "near_duplicate_of", it.NearDuplicateOf)
	dst = appendOmitEmpty(dst, "referer", it.Referer)
	dst = appendKeyInt(dst, "slave", int64(it.Slave))
	dst = appendOmitEmpty(dst, "etag", it.ETag)
	dst = appendOmitEmpty(dst, "last_modified", it.LastModified)
	dst = appendOmitEmpty(dst, "content_hash", it.ContentHash)
	dst = appendOmitZeroInt(dst, "version", it.Version)
	return appendItemTail(dst, it)
}

// appendItemTail is the item's fields after version.
func appendItemTail(dst []byte, it Item) ([]byte, bool) {
	ok := true
	for _, t := range [...]struct {
		key string
		at  time.Time
	}{{"first_seen_at", it.FirstSeenAt}, {"changed_at", it.ChangedAt}, {"checked_at", it.CheckedAt}} {
		if dst, ok = appendOmitZeroTime(dst, t.key, t.at); !ok {
			return dst, false
		}
	}
	dst = appendOmitZeroInt(dst, "changed_round", it.ChangedRound)
	dst = appendOmitZeroInt(dst, "check_every", it.CheckEvery)
	if dst, ok = appendOmitZeroTime(dst, "next_check_at", it.NextCheckAt); !ok {
		return dst, false
	}
	return append(dst, '}'), true
}

// appendFieldsJSON appends an item's fields as json.Marshal writes a
// map[string]any: keys sorted bytewise, null for a nil map.
func appendFieldsJSON(dst []byte, fields map[string]any) ([]byte, bool) {
	if fields == nil {
		return append(dst, "null"...), true
	}
	var small [16]string
	keys := small[:0]
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, k)
		dst = append(dst, ':')
		var ok bool
		if dst, ok = appendValueJSON(dst, fields[k]); !ok {
			return dst, false
		}
	}
	return append(dst, '}'), true
}

// appendValueJSON appends one field value; a type it does not write
// itself is json.Marshal's (the same bytes it would write inside a map).
func appendValueJSON(dst []byte, v any) ([]byte, bool) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), true
	case string:
		return appendJSONString(dst, v), true
	case []string:
		return appendStringsJSON(dst, v), true
	case []any:
		return appendListJSON(dst, v)
	case bool:
		return strconv.AppendBool(dst, v), true
	case int64:
		return strconv.AppendInt(dst, v, 10), true
	case int:
		return strconv.AppendInt(dst, int64(v), 10), true
	case float64:
		return appendFloatJSON(dst, v)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return dst, false
	}
	return append(dst, b...), true
}

// appendStringsJSON appends a list of strings; nil is null.
func appendStringsJSON(dst []byte, list []string) []byte {
	if list == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, s := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, s)
	}
	return append(dst, ']')
}

// appendListJSON appends a list of values; nil is null.
func appendListJSON(dst []byte, list []any) ([]byte, bool) {
	if list == nil {
		return append(dst, "null"...), true
	}
	dst = append(dst, '[')
	for i, v := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		var ok bool
		if dst, ok = appendValueJSON(dst, v); !ok {
			return dst, false
		}
	}
	return append(dst, ']'), true
}

// appendFloatJSON writes f as encoding/json does (ES6 number to string:
// %f, or %e with the exponent unpadded outside 1e-6..1e21); NaN and the
// infinities are refused, as json refuses them.
func appendFloatJSON(dst []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if n := len(dst); format == 'e' && n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
		dst[n-2] = dst[n-1] // e-07 -> e-7
		dst = dst[:n-1]
	}
	return dst, true
}

// appendTime writes t as time.Time.MarshalJSON does (RFC 3339 with
// nanoseconds, quoted); a year outside 0..9999 or an offset of a day or
// more, which MarshalJSON refuses, is refused.
func appendTime(dst []byte, t time.Time) ([]byte, bool) {
	if y := t.Year(); y < 0 || y > 9999 {
		return dst, false
	}
	if _, off := t.Zone(); off <= -24*3600 || off >= 24*3600 {
		return dst, false
	}
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, time.RFC3339Nano)
	return append(dst, '"'), true
}

// appendKeyString appends sep, the key and a string value.
func appendKeyString(dst []byte, sep byte, key, v string) []byte {
	dst = append(dst, sep, '"')
	dst = append(dst, key...)
	dst = append(dst, '"', ':')
	return appendJSONString(dst, v)
}

// appendOmitEmpty appends a string field tagged omitempty.
func appendOmitEmpty(dst []byte, key, v string) []byte {
	if v == "" {
		return dst
	}
	return appendKeyString(dst, ',', key, v)
}

// appendKeyInt appends an integer field.
func appendKeyInt(dst []byte, key string, v int64) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, key...)
	dst = append(dst, '"', ':')
	return strconv.AppendInt(dst, v, 10)
}

// appendOmitZeroInt appends an integer field tagged omitempty.
func appendOmitZeroInt(dst []byte, key string, v int64) []byte {
	if v == 0 {
		return dst
	}
	return appendKeyInt(dst, key, v)
}

// appendOmitZeroTime appends a time field tagged omitzero.
func appendOmitZeroTime(dst []byte, key string, t time.Time) ([]byte, bool) {
	if t.IsZero() {
		return dst, true
	}
	dst = append(dst, ',', '"')
	dst = append(dst, key...)
	dst = append(dst, '"', ':')
	return appendTime(dst, t)
}

const hexDigits = "0123456789abcdef"

// appendJSONString writes s quoted as encoding/json does by default: <, >
// and & escaped for HTML, control characters escaped, invalid UTF-8 as
// \ufffd, U+2028 and U+2029 escaped.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if htmlSafe(b) {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = appendEscapedByte(dst, b)
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// htmlSafe reports whether ASCII byte b is written as itself.
func htmlSafe(b byte) bool { return htmlSafeASCII[b] }

// htmlSafeASCII is htmlSafe's table: a lookup, not five comparisons, for
// each byte of a page's text.
var htmlSafeASCII = func() (t [utf8.RuneSelf]bool) {
	for b := byte(0x20); b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()

// appendEscapedByte writes an ASCII byte that htmlSafe refuses.
func appendEscapedByte(dst []byte, b byte) []byte {
	switch b {
	case '\\', '"':
		return append(dst, '\\', b)
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
}
