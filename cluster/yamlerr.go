package cluster

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// typeErrorRE reads yaml.v3's "line 5: cannot unmarshal !!str `three` into
// int": the line and the value.
var typeErrorRE = regexp.MustCompile("^line (\\d+): [^`]*(?:`([^`]*)`)?")

// nameFields rewrites a decoding error so that it names the field whose
// value did not decode ("max_retries (line 5): ..."), as every other error
// of a job file does; yaml.v3 itself gives only the line.
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

// nameTypeError puts the field in front of one of yaml.v3's messages.
func nameTypeError(root *yaml.Node, msg string) string {
	m := typeErrorRE.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	line, _ := strconv.Atoi(m[1])
	if path := fieldAt(root, "", line, 0, m[2]); path != "" {
		return path + " (" + msg + ")"
	}
	return msg
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
			path := key.Value
			if prefix != "" {
				path = prefix + "." + key.Value
			}
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
