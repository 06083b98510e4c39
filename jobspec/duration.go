package jobspec

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Duration is a time.Duration that reads "90s", "168h", a whole number of
// days ("30d") or a bare 0 from YAML and JSON, and writes itself back as
// a string.
type Duration time.Duration

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// String formats d like time.Duration.
func (d Duration) String() string { return time.Duration(d).String() }

// UnmarshalYAML accepts a Go duration string or the integer 0.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := parseDuration(n.Value)
	if err != nil {
		return &nodeError{line: n.Line, column: n.Column, err: err}
	}
	*d = v
	return nil
}

// nodeError is a value that does not decode, with where it stands in the
// file, so the parser can name its field.
type nodeError struct {
	line, column int
	err          error
}

func (e *nodeError) Error() string { return fmt.Sprintf("line %d: %v", e.line, e.err) }

func (e *nodeError) Unwrap() error { return e.err }

// MarshalYAML writes d as a duration string.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// UnmarshalJSON accepts a duration string or the number 0.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		s = string(b)
	}
	v, err := parseDuration(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// MarshalJSON writes d as a duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

func parseDuration(s string) (Duration, error) {
	if s == "0" || s == "" {
		return 0, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseUint(days, 10, 32)
		if err != nil || n > 100*365 {
			return 0, fmt.Errorf("%q is not a duration (want e.g. 90s, 24h, 30d)", s)
		}
		return Duration(time.Duration(n) * 24 * time.Hour), nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (want e.g. 90s, 24h, 30d)", s)
	}
	return Duration(v), nil
}
