package jobspec

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// typeErrorRE reads yaml.v3's "line 5: cannot unmarshal !!str `three` into
// int": the line, the value's tag, the value and the Go type.
var typeErrorRE = regexp.MustCompile("^line (\\d+): cannot unmarshal (!!\\w+)(?: `([^`]*)`)? into (.+)$")

// unknownFieldRE reads yaml.v3's "line 5: field re not found in type
// jobspec.FieldRule": the line and the key.
var unknownFieldRE = regexp.MustCompile(`^line (\d+): field (\S+) not found in type `)

// nameFields rewrites a decoding error so that it names the field whose
// value did not decode ("max_retries (line 5): ..."), as every other error
// of a job file does, in the job file's words: yaml.v3 itself gives only
// the line, and Go's type names.
func nameFields(data []byte, err error) error {
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil {
		return err
	}
	var ne *nodeError
	if errors.As(err, &ne) {
		if path := fieldAt(&root, "", ne.line, ne.column, ""); path != "" {
			return fmt.Errorf("%s (line %d): %w", path, ne.line, ne.err)
		}
		return err
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	msgs := make([]string, 0, len(te.Errors))
	for _, msg := range te.Errors {
		msgs = append(msgs, nameTypeError(&root, msg))
	}
	return errors.New(strings.Join(msgs, "; "))
}

// nameTypeError rewrites one of yaml.v3's messages: the field's path in
// front, then what is wrong in the job file's words.
func nameTypeError(root *yaml.Node, msg string) string {
	if m := unknownFieldRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		if path := keyAt(root, "", line, m[2]); path != "" {
			return fmt.Sprintf("%s (line %d): unknown field", path, line)
		}
		return fmt.Sprintf("line %d: unknown field %s", line, m[2])
	}
	m := typeErrorRE.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	line, _ := strconv.Atoi(m[1])
	what := yamlKinds[m[2]]
	if what == "" {
		what = "a value"
	}
	if m[3] != "" {
		what = strconv.Quote(m[3]) + " is " + what
	} else {
		what = "the value is " + what
	}
	text := fmt.Sprintf("%s, want %s", what, wantOf(m[4]))
	if path := fieldAt(root, "", line, 0, m[3]); path != "" {
		return fmt.Sprintf("%s (line %d): %s", path, line, text)
	}
	return fmt.Sprintf("line %d: %s", line, text)
}

// yamlKinds names YAML's tags as a job file's reader knows them.
var yamlKinds = map[string]string{"!!str": "a string", "!!int": "a whole number", "!!float": "a number",
	"!!bool": "true or false", "!!seq": "a list", "!!map": "a mapping", "!!null": "empty",
	"!!timestamp": "a date"}

// wantOf names the value a Go type takes, in a job file's words.
func wantOf(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "map["):
		return "a mapping"
	case strings.HasPrefix(goType, "int") || strings.HasPrefix(goType, "uint"):
		return "a whole number"
	case strings.HasPrefix(goType, "float"):
		return "a number"
	case goType == "bool":
		return "true or false"
	case goType == "string":
		return "a string"
	}
	return "a mapping"
}

// keyAt is the dotted path of the mapping key name at line, or "".
func keyAt(n *yaml.Node, prefix string, line int, name string) string {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			if p := keyAt(c, prefix, line, name); p != "" {
				return p
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i], n.Content[i+1]
			path := joinPath(prefix, key.Value)
			if key.Line == line && key.Value == name {
				return path
			}
			if p := keyAt(val, path, line, name); p != "" {
				return p
			}
		}
	}
	return ""
}

func joinPath(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// fieldAt is the dotted path of the mapping value at line (and column, or
// with the scalar value, when given), or "".
func fieldAt(n *yaml.Node, prefix string, line, column int, value string) string {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			if p := fieldAt(c, prefix, line, column, value); p != "" {
				return p
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i], n.Content[i+1]
			path := joinPath(prefix, key.Value)
			if p := fieldAt(val, path, line, column, value); p != "" {
				return p
			}
			if val.Line == line && (column == 0 || val.Column == column) &&
				(value == "" || val.Kind != yaml.ScalarNode || val.Value == value) {
				return path
			}
		}
	}
	return ""
}
