package bench

import (
	"bytes"
	"errors"
	"testing"

	"github.com/crawler-dev/crawler/cluster"
)

func TestWriteTables(t *testing.T) {
	tables := []Table{
		{Caption: "Two rows.", Header: []string{"name", "value"}, Rows: [][]string{{"a", "1"}, {"client|setinfo", "22"}},
			Notes: []string{"first note", "second note"}},
		{Header: []string{"x"}, Rows: [][]string{{"y"}}},
	}
	for _, tc := range []struct {
		format Format
		want   string
	}{
		{FormatText, "Two rows.\n\nname            value\na               1\nclient|setinfo  22\n\nfirst note\nsecond note\n\nx\ny\n"},
		{FormatMarkdown, "Two rows.\n\n| name | value |\n| --- | --- |\n| a | 1 |\n| client\\|setinfo | 22 |\n\n- first note\n- second note\n\n| x |\n| --- |\n| y |\n"},
	} {
		t.Run(string(tc.format), func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteTables(&b, tc.format, tables...); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}
}

func TestFormat_Validate(t *testing.T) {
	for _, f := range []Format{FormatText, FormatMarkdown} {
		if err := f.Validate(); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	var fe *cluster.FieldError
	if err := Format("html").Validate(); !errors.As(err, &fe) || fe.Field != "Format" {
		t.Errorf("html: %v, want a FieldError on Format", err)
	}
}
