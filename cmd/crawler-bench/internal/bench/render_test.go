package bench

import (
	"context"
	"strings"
	"testing"

	"github.com/crawler-dev/crawler/statuspage/browsertest"
)

// TestRender: a small rendering benchmark renders the page in Chromium
// (the script's JSON read, or Render fails on an empty price) and prints a
// row for each mode, with the CPU and the browser's memory measured.
func TestRender(t *testing.T) {
	opts := RenderOptions{Browser: browsertest.ChromiumPath(t), Pages: 2, Tabs: []int{1}}
	rows, err := Render(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0].Mode != "fetch" || rows[1].Mode != "render" {
		t.Fatalf("rows = %+v, want fetch, render and render with the browser sending", rows)
	}
	for _, r := range rows[1:] {
		if r.CPU <= 0 || r.Memory <= 0 {
			t.Errorf("%s row: CPU %s, memory %d; want both measured", r.Mode, r.CPU, r.Memory)
		}
	}
	var out strings.Builder
	if err := WriteTables(&out, FormatText, RenderTable(rows)); err != nil || !strings.Contains(out.String(), "MiB/tab") {
		t.Errorf("table: %v\n%s", err, out.String())
	}
}
