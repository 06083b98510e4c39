package cluster

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeTaskFast reads a task's wire form as Encode writes it, one flat
// object of the Task's keys, without encoding/json: a slave decodes every
// task it takes, and json.Unmarshal's reflection and copies were 2.4% of
// its CPU. Its strings are slices of s where they hold no escape. ok is
// false for anything else it would have to interpret (a surrogate escape
// or a non-UTF-8 string, a number json writes otherwise, a key it does
// not know or one given twice, white space), which json.Unmarshal then
// reads: a task decodes the same whichever reads it (taskdecode_test.go).
func decodeTaskFast(s string) (t Task, ok bool) {
	rest, ok := strings.CutPrefix(s, "{")
	if !ok || rest == "}" {
		return Task{}, ok
	}
	var seen [len(taskKeys)]bool
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
const taskKeys = "ufjrnxkp"

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
	case 'p':
		var p int64
		rest, ok = readPlainInt(s, &p)
		t.Priority = int(p) // int is 64 bits wherever the crawler builds
		return rest, ok
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
// control character, only valid UTF-8, and no escape but the short ones
// and \uXXXX outside the surrogates (a URL's & is written \u0026): its
// value is its bytes, or, when it has escapes, those bytes unescaped.
func cutPlainString(s string) (v, rest string, ok bool) {
	if !strings.HasPrefix(s, `"`) {
		return "", "", false
	}
	escapes := false
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			v, rest = s[1:i], s[i+1:]
			if !utf8.ValidString(v) {
				return "", "", false
			}
			if escapes {
				v, ok = unescape(v)
				return v, rest, ok
			}
			return v, rest, true
		case c < 0x20:
			return "", "", false
		case c == '\\':
			escapes = true
			i++ // the escaped byte: never the closing quote
		}
	}
	return "", "", false
}

// unescape is the value of a JSON string's body that has escapes (see
// cutPlainString).
func unescape(body string) (string, bool) {
	var b strings.Builder
	b.Grow(len(body))
	for i := 0; i < len(body); i++ {
		if body[i] != '\\' {
			b.WriteByte(body[i])
			continue
		}
		i++
		if i == len(body) {
			return "", false
		}
		if c, ok := shortEscapes[body[i]]; ok {
			b.WriteByte(c)
			continue
		}
		if body[i] != 'u' || i+4 >= len(body) {
			return "", false
		}
		r, err := strconv.ParseUint(body[i+1:i+5], 16, 16)
		if err != nil || utf16.IsSurrogate(rune(r)) {
			return "", false
		}
		b.WriteRune(rune(r))
		i += 4
	}
	return b.String(), true
}

// shortEscapes are JSON's one-letter escapes and what they stand for.
var shortEscapes = map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

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
