package extract

import (
	"errors"
	"fmt"
	"strings"
)

// MaxJSONDepth is how deeply a JSON page or a JSON-LD block may nest
// lists and objects. gjson validates and formats recursively, one Go
// stack frame per level: a page of 20M "[" took a gigabyte of stack and
// then the process. Real documents nest a few dozen levels.
const MaxJSONDepth = 512

// ErrTooDeep is returned for a JSON page nested deeper than MaxJSONDepth.
// FailureKind names it FailureLimit.
var ErrTooDeep = fmt.Errorf("json nested deeper than %d levels", MaxJSONDepth)

// checkDepth returns ErrTooDeep when b nests lists and objects deeper than
// MaxJSONDepth. It reads b once, without recursion, skipping strings, so
// it is safe on any bytes; it does not validate.
func checkDepth[T ~string | ~[]byte](b T) error {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = stringEnd(b, i)
		case '[', '{':
			if depth++; depth > MaxJSONDepth {
				return ErrTooDeep
			}
		case ']', '}':
			depth--
		}
	}
	return nil
}

// stringEnd is the index of the quote that closes the string opened at
// i, or len(b) when it is not closed.
func stringEnd[T ~string | ~[]byte](b T, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return len(b)
}

// isSpace reports JSON's white space.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// skipSpace is the index of the first byte at or after i that is not
// white space.
func skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// valueEnd is the index just past the value that starts at i (not white
// space): a string, a list or object (brackets counted, no recursion) or
// a scalar. On malformed JSON it never passes len(s) and never returns i
// for a value that has a first byte, so a loop over values always ends.
func valueEnd(s string, i int) int {
	switch s[i] {
	case '"':
		return min(stringEnd(s, i)+1, len(s))
	case '[', '{':
		return containerEnd(s, i)
	}
	j := i + 1
	for j < len(s) && !isSpace(s[j]) && strings.IndexByte(",:]}[{\"", s[j]) < 0 {
		j++
	}
	return j
}

// containerEnd is the index just past the list or object opened at i.
func containerEnd(s string, i int) int {
	depth := 0
	for ; i < len(s); i++ {
		switch s[i] {
		case '"':
			i = stringEnd(s, i)
		case '[', '{':
			depth++
		case ']', '}':
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return len(s)
}

// errStopped says a walk stopped on its meter (see meter.err).
var errStopped = errors.New("stopped")

// listValues calls emit with every value of the list raw (which starts
// with '['), descending into lists within it, in document order: what a
// list at a json path gives. It reads raw once, without recursion; each
// value is charged to m.
func listValues(raw string, m *meter, emit func(string)) error {
	depth := 0
	for i := 0; i < len(raw); {
		switch c := raw[i]; {
		case c == '[':
			if depth++; depth > MaxJSONDepth {
				return ErrTooDeep
			}
			i++
		case c == ']':
			depth--
			i++
		case c == ',' || c == ':' || c == '}' || isSpace(c):
			i++
		default:
			end := valueEnd(raw, i)
			if !m.charge(int64(end-i)/16 + 1) {
				return errStopped
			}
			emit(raw[i:end])
			i = end
		}
	}
	return nil
}
