package store

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Format is how items are written to a file: JSON Lines, one JSON array, or
// CSV.
type Format int

// The output formats, chosen by the file's extension (see FormatOf).
const (
	// FormatJSONL is one JSON object per line (.jsonl, and "-" for stdout).
	FormatJSONL Format = iota
	// FormatJSON is one JSON array of objects, one object per line (.json).
	FormatJSON
	// FormatCSV is a header `url,job,fetched_at,status,round,<fields
	// sorted>` and one row per item (.csv); a list field's values are
	// joined with ListSeparator.
	FormatCSV
)

// Stdout is the output path that means standard output (JSON Lines,
// streamed, not fsynced).
const Stdout = "-"

// ListSeparator joins the values of a list field (tags: [a, b]) into one
// CSV cell: "a | b".
const ListSeparator = " | "

// ErrUnknownFormat means an output path's extension names no Format.
var ErrUnknownFormat = errors.New("unknown output format")

// String is the format's usual extension without the dot.
func (f Format) String() string {
	switch f {
	case FormatJSON:
		return "json"
	case FormatCSV:
		return "csv"
	default:
		return "jsonl"
	}
}

// FormatOf is the format of an output path, from its extension: .jsonl,
// .json or .csv (any case), or "-" for JSON Lines on stdout. Any other
// extension, or none, is an error wrapping ErrUnknownFormat that lists the
// accepted ones; the caller names its flag (-o).
func FormatOf(path string) (Format, error) {
	if path == Stdout {
		return FormatJSONL, nil
	}
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".jsonl":
		return FormatJSONL, nil
	case ".json":
		return FormatJSON, nil
	case ".csv":
		return FormatCSV, nil
	default:
		if ext == "" {
			ext = "(none)"
		}
		return 0, fmt.Errorf("%w: %s has extension %s; use .jsonl, .json, .csv, or - for stdout", ErrUnknownFormat, path, ext)
	}
}

// itemLine encodes one item as the bytes a format writes for it: a JSON
// object (no newline) for JSON and JSON Lines, a CSV record (with its
// newline) for CSV.
type itemLine func(it Item) ([]byte, error)

func jsonLine(it Item) ([]byte, error) { return json.Marshal(it) }

// csvFixed are the CSV columns every item has, before its fields; a
// reopened file knows which round a row is of by its round column. kind is
// the item's page kind (empty in the short form).
var csvFixed = []string{"url", "job", "fetched_at", "status", "round", "kind"}

// csvFixedWithoutKind are the fixed columns of a CSV file written before
// the kind column: such a file is appended to in its own layout.
var csvFixedWithoutKind = csvFixed[:5]

// csvRoundColumn is the index of the round column.
const csvRoundColumn = 4

// csvColumns is the CSV header for a job with these fields.
func csvColumns(fields []string) []string { return csvColumnsAfter(csvFixed, fields) }

// csvColumnsAfter is the header of fixed columns then the fields, sorted.
func csvColumnsAfter(fixed, fields []string) []string {
	sorted := slices.Clone(fields)
	slices.Sort(sorted)
	return append(slices.Clone(fixed), slices.Compact(sorted)...)
}

// csvRecord encodes records with the header's columns, quoted as CSV
// needs (commas, quotes, newlines).
func csvRecord(rec []string) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.Write(rec); err != nil {
		return nil, err
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// csvLine returns the CSV encoder for a job with these fields.
func csvLine(fields []string) itemLine { return csvLineAfter(csvFixed, fields) }

// csvLineAfter returns the CSV encoder of the fixed columns (csvFixed, or
// csvFixedWithoutKind for an older file) then the fields.
func csvLineAfter(fixed, fields []string) itemLine {
	cols := csvColumnsAfter(fixed, fields)[len(fixed):]
	withKind := len(fixed) == len(csvFixed)
	return func(it Item) ([]byte, error) {
		rec := make([]string, 0, len(fixed)+len(cols))
		at := ""
		if !it.FetchedAt.IsZero() {
			at = it.FetchedAt.UTC().Format(time.RFC3339Nano)
		}
		rec = append(rec, it.URL, it.Job, at, strconv.Itoa(it.Status), strconv.FormatInt(it.Round, 10))
		if withKind {
			rec = append(rec, it.Kind)
		}
		for _, c := range cols {
			rec = append(rec, cellText(it.Fields[c]))
		}
		return csvRecord(rec)
	}
}

// cellText is a field's value as one CSV cell: lists joined with
// ListSeparator, a missing field empty.
func cellText(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case []string:
		return strings.Join(v, ListSeparator)
	case []any:
		return joinAny(v)
	case bson.A:
		return joinAny(v)
	default:
		return fmt.Sprint(v)
	}
}

func joinAny(vs []any) string {
	parts := make([]string, len(vs))
	for i, e := range vs {
		parts[i] = cellText(e)
	}
	return strings.Join(parts, ListSeparator)
}

// ItemWriter writes items one after another in one Format, to a stream.
type ItemWriter interface {
	// Write writes one item.
	Write(it Item) error
	// Close writes what the format needs at the end (the JSON array's
	// closing bracket) and flushes; it does not close the stream.
	Close() error
}

// NewItemWriter writes items to w in format f. fields are the job's field
// names, the CSV columns after url, job, fetched_at, status, round and
// kind (ignored by the JSON formats). Output is buffered until Close.
func NewItemWriter(w io.Writer, f Format, fields []string) ItemWriter {
	bw := bufio.NewWriter(w)
	switch f {
	case FormatJSON:
		return &jsonArrayWriter{w: bw}
	case FormatCSV:
		return &csvWriter{w: bw, header: csvColumns(fields), line: csvLine(fields)}
	default:
		return &jsonlWriter{w: bw}
	}
}

type jsonlWriter struct{ w *bufio.Writer }

func (j *jsonlWriter) Write(it Item) error {
	b, err := jsonLine(it)
	if err != nil {
		return fmt.Errorf("encode item %s: %w", it.URL, err)
	}
	_, err = j.w.Write(append(b, '\n'))
	return err
}

func (j *jsonlWriter) Close() error { return j.w.Flush() }

// jsonArrayWriter writes "[\n", the items separated by ",\n", and "\n]\n":
// one JSON array with one item per line.
type jsonArrayWriter struct {
	w *bufio.Writer
	n int
}

func (j *jsonArrayWriter) Write(it Item) error {
	b, err := jsonLine(it)
	if err != nil {
		return fmt.Errorf("encode item %s: %w", it.URL, err)
	}
	return j.writeRaw(b)
}

// writeRaw writes one element, already encoded.
func (j *jsonArrayWriter) writeRaw(b []byte) error {
	sep := ",\n"
	if j.n == 0 {
		sep = "[\n"
	}
	j.n++
	if _, err := j.w.WriteString(sep); err != nil {
		return err
	}
	_, err := j.w.Write(b)
	return err
}

func (j *jsonArrayWriter) Close() error {
	end := "\n]\n"
	if j.n == 0 {
		end = "[]\n"
	}
	if _, err := j.w.WriteString(end); err != nil {
		return err
	}
	return j.w.Flush()
}

// csvWriter writes the header before the first row (or at Close, when
// there are no rows).
type csvWriter struct {
	w       *bufio.Writer
	header  []string
	line    itemLine
	started bool
}

func (c *csvWriter) start() error {
	if c.started {
		return nil
	}
	c.started = true
	b, err := csvRecord(c.header)
	if err != nil {
		return err
	}
	_, err = c.w.Write(b)
	return err
}

func (c *csvWriter) Write(it Item) error {
	if err := c.start(); err != nil {
		return err
	}
	b, err := c.line(it)
	if err != nil {
		return fmt.Errorf("encode item %s: %w", it.URL, err)
	}
	_, err = c.w.Write(b)
	return err
}

func (c *csvWriter) Close() error {
	if err := c.start(); err != nil {
		return err
	}
	return c.w.Flush()
}
