package jobspec

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// unmarshalerType is yaml.v3's Unmarshaler: a type that reads its own
// nodes is not walked by wholeNumbers.
var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

// wholeNumbers finds a number with a fraction written where the job file
// wants a whole number (max_depth: 1.5), which yaml.v3 truncates silently,
// and names it. n is the node decoded into a value of type t.
func wholeNumbers(n *yaml.Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	switch {
	case n.Kind == yaml.DocumentNode && len(n.Content) == 1:
		return wholeNumbers(n.Content[0], t, path)
	case n.Kind == yaml.ScalarNode && isInteger(t.Kind()) && n.ShortTag() == "!!float" && !integral(n.Value):
		return fmt.Errorf("%s (line %d): %s is not a whole number", path, n.Line, n.Value)
	case n.Kind == yaml.SequenceNode && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
		for i, c := range n.Content {
			if err := wholeNumbers(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i].Value, n.Content[i+1]
			vt, ok := valueType(t, key)
			if !ok {
				continue
			}
			if err := wholeNumbers(val, vt, joinPath(path, key)); err != nil {
				return err
			}
		}
	}
	return nil
}

// valueType is the type that the value of key decodes into in a t.
func valueType(t reflect.Type, key string) (reflect.Type, bool) {
	switch t.Kind() {
	case reflect.Map:
		return t.Elem(), true
	case reflect.Struct:
		return structField(t, key)
	}
	return nil, false
}

// structField is the type of t's field with the YAML name key, looking
// into inline fields.
func structField(t reflect.Type, key string) (reflect.Type, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if strings.Contains(opts, "inline") {
			if ft, ok := structField(f.Type, key); ok {
				return ft, true
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		if name == key && f.IsExported() {
			return f.Type, true
		}
	}
	return nil, false
}

// integral reports a float such as 1.0 or 1e3 that is a whole number.
func integral(value string) bool {
	f, err := strconv.ParseFloat(value, 64)
	return err == nil && f == math.Trunc(f)
}

func isInteger(k reflect.Kind) bool {
	return k >= reflect.Int && k <= reflect.Uint64
}

// checkWholeNumbers runs wholeNumbers over a job file that decoded.
func checkWholeNumbers(data []byte) error {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil // it decoded into a Job: cannot happen
	}
	return wholeNumbers(&root, reflect.TypeFor[Job](), "")
}
