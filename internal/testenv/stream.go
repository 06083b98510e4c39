package testenv

import (
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// StreamSitemap writes a <urlset> of about size bytes that lists
// http://host/p/0 to http://host/p/(pages-1) over and over, a chunk at a
// time, so a test serves a sitemap far larger than a crawler reads
// without holding it. It stops early once w fails (the reader went away).
func StreamSitemap(w io.Writer, host string, pages, size int) {
	if _, err := io.WriteString(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`); err != nil {
		return
	}
	var chunk strings.Builder
	for i := 0; chunk.Len() < 64<<10; i++ {
		fmt.Fprintf(&chunk, "<url><loc>http://%s/p/%d</loc></url>\n", host, i%pages)
	}
	for written := 0; written < size; written += chunk.Len() {
		if _, err := io.WriteString(w, chunk.String()); err != nil {
			return
		}
	}
	_, _ = io.WriteString(w, "</urlset>")
}

// DeadPID returns the ID of a process that ran and was reaped.
func DeadPID(t testing.TB) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}
