package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/crawler-dev/crawler/cluster"
)

// Format is how a benchmark prints its tables.
type Format string

// Formats a benchmark prints.
const (
	// FormatText is aligned columns for a terminal.
	FormatText Format = "text"
	// FormatMarkdown is GitHub Markdown, as docs/benchmarks.md holds it.
	FormatMarkdown Format = "md"
)

// Validate reports a format that is neither text nor md.
func (f Format) Validate() error {
	if f != FormatText && f != FormatMarkdown {
		return cluster.Invalid("Format", string(f), "is not text or md")
	}
	return nil
}

// Table is one table of a benchmark: a caption line above it, a header,
// rows, and notes below it that say how the numbers were taken.
type Table struct {
	// Caption says what the table measures, in one line.
	Caption string
	// Header names the columns.
	Header []string
	// Rows are the cells, one slice per row, as long as Header.
	Rows [][]string
	// Notes are lines printed under the table.
	Notes []string
}

// AddRow appends a row of cells.
func (t *Table) AddRow(cells ...string) { t.Rows = append(t.Rows, cells) }

// WriteTables prints tables in format f, a blank line between them.
func WriteTables(w io.Writer, f Format, tables ...Table) error {
	for i, t := range tables {
		if i > 0 {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
		var err error
		if f == FormatMarkdown {
			err = t.writeMarkdown(w)
		} else {
			err = t.writeText(w)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (t Table) writeText(w io.Writer) error {
	if t.Caption != "" {
		fmt.Fprintf(w, "%s\n\n", t.Caption)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(t.Header, "\t"))
	for _, r := range t.Rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return writeNotes(w, t.Notes, "")
}

func (t Table) writeMarkdown(w io.Writer) error {
	if t.Caption != "" {
		fmt.Fprintf(w, "%s\n\n", t.Caption)
	}
	fmt.Fprintf(w, "| %s |\n", strings.Join(mdCells(t.Header), " | "))
	fmt.Fprintf(w, "|%s\n", strings.Repeat(" --- |", len(t.Header)))
	for _, r := range t.Rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(mdCells(r), " | "))
	}
	return writeNotes(w, t.Notes, "- ")
}

func writeNotes(w io.Writer, notes []string, bullet string) error {
	if len(notes) == 0 {
		return nil
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	for _, n := range notes {
		if _, err := fmt.Fprintf(w, "%s%s\n", bullet, n); err != nil {
			return err
		}
	}
	return nil
}

// mdCells escapes the pipes that would end a Markdown cell.
func mdCells(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = strings.ReplaceAll(c, "|", `\|`)
	}
	return out
}
