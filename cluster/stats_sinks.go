package cluster

import "strings"

// Sink results: what a sink did with a record.
const (
	SinkAccepted = "accepted" // the sink took the record
	SinkRetried  = "retried"  // a try failed and the record is sent again
	SinkRefused  = "refused"  // the sink will never take the record
)

// SinkStatPrefix starts every per-sink counter's stats field.
const SinkStatPrefix = "sink:"

// SinkStat is the stats field of what the sinks named name (their
// scheme: "postgres", "s3"; never a URI or a credential) did with the
// job's records: sink:<name>:<result>, result accepted, retried or
// refused.
func SinkStat(name, result string) string { return SinkStatPrefix + name + ":" + result }

// ParseSinkStat splits a per-sink stats field into the sink's name and
// the result; ok is false for any other field.
func ParseSinkStat(field string) (name, result string, ok bool) {
	rest, ok := strings.CutPrefix(field, SinkStatPrefix)
	if !ok {
		return "", "", false
	}
	i := strings.LastIndex(rest, ":")
	if i <= 0 {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}
