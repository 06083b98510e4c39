package cluster

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// decodeTaskFast reads a task's wire form as Encode writes it, one flat
// object of the Task's keys, without encoding/json: a slave decodes every
// task it takes, and json.Unmarshal's reflection and copies were 2.4% of
// its CPU. Its strings are slices of s. ok is false for anything else it
// would have to interpret (an escaped or non-UTF-8 string, a number json
// writes otherwise, a key it does not know or one given twice, white
// space), which json.Unmarshal then reads: a task decodes the same
// whichever reads it (taskdecode_test.go).
func decodeTaskFast(s string) (t Task, ok bool) {
	rest, ok := strings.CutPrefix(s, "{")
	if !ok || rest == "}" {
		return Task{}, ok
	}
	var seen [7]bool
	for {
		var key string
		if key, rest, ok = cutTaskKey(rest); !ok {
			return Task{}, false
		}
		i := strings.IndexByte(taskKeys, key[0])
		if len(key) != 1 || i < 0 || seen[i] {
			return Task{}, false
		}
		seen[i] = true
		if rest, ok = t.readField(key[0], rest); !ok {
			return Task{}, false
		}
		switch {
		case rest == "}":
			return t, true
		case strings.HasPrefix(rest, ","):
			rest = rest[1:]
		default:
			return Task{}, false
		}
	}
}

// taskKeys are the wire keys of Task's fields.
const taskKeys = "ufjrnxk"

// cutTaskKey reads `"key":` at the start of s.
func cutTaskKey(s string) (key, rest string, ok bool) {
	key, rest, ok = cutPlainString(s)
	if !ok || key == "" || !strings.HasPrefix(rest, ":") {
		return "", "", false
	}
	return key, rest[1:], true
}

// readField reads the value of key at the start of s into t.
func (t *Task) readField(key byte, s string) (rest string, ok bool) {
	switch key {
	case 'n':
		return readPlainInt(s, &t.Round)
	case 'x':
		return readBool(s, &t.Retry)
	}
	v, rest, ok := cutPlainString(s)
	switch key {
	case 'u':
		t.URL = v
	case 'f':
		t.FP = v
	case 'j':
		t.Job = v
	case 'r':
		t.Referer = v
	case 'k':
		t.Kind = v
	}
	return rest, ok
}

// cutPlainString reads a JSON string at the start of s that holds no
// escape, no control character and only valid UTF-8: its value is its
// bytes.
func cutPlainString(s string) (v, rest string, ok bool) {
	if !strings.HasPrefix(s, `"`) {
		return "", "", false
	}
	end := strings.IndexByte(s[1:], '"')
	if end < 0 {
		return "", "", false
	}
	v = s[1 : 1+end]
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c == '\\' {
			return "", "", false
		}
	}
	if !utf8.ValidString(v) {
		return "", "", false
	}
	return v, s[2+end:], true
}

// readPlainInt reads an integer as json writes one: an optional minus
// and digits, no leading zero.
func readPlainInt(s string, into *int64) (string, bool) {
	end := 0
	if strings.HasPrefix(s, "-") {
		end = 1
	}
	digits := end
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	if end == digits || (s[digits] == '0' && end > digits+1) {
		return "", false
	}
	n, err := strconv.ParseInt(s[:end], 10, 64)
	if err != nil {
		return "", false
	}
	*into = n
	return s[end:], true
}

// readBool reads true or false.
func readBool(s string, into *bool) (string, bool) {
	if rest, ok := strings.CutPrefix(s, "true"); ok {
		*into = true
		return rest, true
	}
	if rest, ok := strings.CutPrefix(s, "false"); ok {
		*into = false
		return rest, true
	}
	return "", false
}
