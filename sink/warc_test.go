package sink

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/internal/testenv"
)

// latin1Site serves pages in ISO-8859-1, gzip-encoded: what the archive
// must keep is the page as sent (less the gzip), not the UTF-8 the
// extractor reads.
func latin1Site(t testing.TB) *httptest.Server {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=iso-8859-1")
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("X-Page", r.URL.Path)
		gz := gzip.NewWriter(w)
		fmt.Fprintf(gz, "<html><body><h1>Caf\xe9 %s</h1>%s</body></html>", r.URL.Path, strings.Repeat("x", 300))
		_ = gz.Close()
	}))
	t.Cleanup(site.Close)
	return site
}

// fetchExchanges fetches n pages of site keeping their exchanges.
func fetchExchanges(t testing.TB, site string, n int) []Record {
	t.Helper()
	f := fetch.New(fetch.DefaultOptions())
	recs := make([]Record, n)
	for i := range recs {
		u := fmt.Sprintf("%s/p/%d", site, i)
		page, err := f.Do(context.Background(), fetch.Request{URL: u, AllowPrivate: true, KeepExchange: true})
		if err != nil {
			t.Fatal(err)
		}
		if page.Exchange == nil || !strings.Contains(string(page.Body), "Café") {
			t.Fatalf("page %s: exchange %v, body %q", u, page.Exchange, page.Body)
		}
		recs[i] = Record{Item: item("news", i, "x"), Exchange: page.Exchange}
	}
	return recs
}

func openTestWARC(t *testing.T, dir, query string) *WARC {
	t.Helper()
	s, _, err := Open(context.Background(), "warc:"+dir+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s.(*WARC)
}

// warcFiles lists the complete WARC files of dir, failing on one left
// open.
func warcFiles(t *testing.T, dir string) []string {
	t.Helper()
	open, _ := filepath.Glob(filepath.Join(dir, "*"+openSuffix))
	if len(open) > 0 {
		t.Fatalf("files left open: %v", open)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	return files
}

// gzipMembers counts the gzip members of a file and the WARC records
// (lines "WARC/1.1") in each: one each, for gzip per record.
func gzipMembers(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	members := 0
	for {
		zr, err := gzip.NewReader(br)
		if errors.Is(err, io.EOF) {
			return members
		}
		if err != nil {
			t.Fatalf("%s member %d: %v", path, members, err)
		}
		zr.Multistream(false)
		b, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("%s member %d: %v", path, members, err)
		}
		if n := bytes.Count(b, []byte("WARC/1.1\r\n")); n != 1 || !bytes.HasPrefix(b, []byte("WARC/1.1\r\n")) {
			t.Fatalf("%s member %d holds %d records", path, members, n)
		}
		members++
	}
}

// TestWARC_Put: each page is a response and a request record with its
// raw answer, readable by warcio.js, digests right, one warcinfo per file,
// gzip per record, files rotated at max_size.
func TestWARC_Put(t *testing.T) {
	site := latin1Site(t)
	dir := filepath.Join(t.TempDir(), "warc")
	w := openTestWARC(t, dir, "?max_size=4KiB")
	recs := fetchExchanges(t, site.URL, 12)
	for i := 0; i < len(recs); i += 3 {
		for _, err := range w.Put(context.Background(), recs[i:i+3]) {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if errs := w.Put(context.Background(), []Record{{Item: item("news", 99, "x"), NotModified: true}}); errs[0] != nil {
		t.Fatalf("a 304 without exchange: %v", errs[0])
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files := warcFiles(t, dir)
	if len(files) < 2 {
		t.Fatalf("%d files at max_size=4KiB, want the archive rotated", len(files))
	}
	members := 0
	for _, f := range files {
		members += gzipMembers(t, f)
	}
	recsRead := testenv.ReadWARC(t, files...)
	if members != len(recsRead) {
		t.Fatalf("%d gzip members, %d records", members, len(recsRead))
	}
	checkWARCRecords(t, recsRead, files, site.URL, len(recs))
}

// checkWARCRecords checks what warcio.js read: a warcinfo first in each
// file, then per page a response (the raw page, its digest right) and a
// request concurrent to it.
func checkWARCRecords(t *testing.T, recs []testenv.WARCRecord, files []string, base string, pages int) {
	t.Helper()
	infos, responses, requests := map[string]int{}, map[string]testenv.WARCRecord{}, map[string]testenv.WARCRecord{}
	last := ""
	for _, r := range recs {
		if r.Version != "WARC/1.1" {
			t.Errorf("record %s is %q", r.ID, r.Version)
		}
		switch r.Type {
		case "warcinfo":
			if r.File == last {
				t.Errorf("a second warcinfo in %s", r.File)
			}
			infos[r.File]++
			if !strings.Contains(r.Payload, "format: WARC File Format 1.1") {
				t.Errorf("warcinfo %q", r.Payload)
			}
		case "response":
			responses[r.URI] = r
			if r.Status != 200 || r.PayloadDigest != r.ComputedDigest || r.PayloadDigest == "" ||
				!strings.Contains(r.Payload, "<h1>Caf\ufffd") || r.ContentType != "text/html; charset=iso-8859-1" {
				t.Errorf("response %+v: want 200, the page as sent in ISO-8859-1, its digest", r)
			}
		case "request":
			requests[r.URI] = r
		default:
			t.Errorf("record of type %q", r.Type)
		}
		if infos[r.File] == 0 {
			t.Errorf("%s record before the warcinfo of %s", r.Type, r.File)
		}
		last = r.File
	}
	if len(infos) != len(files) {
		t.Errorf("%d warcinfo records in %d files", len(infos), len(files))
	}
	for i := range pages {
		u := fmt.Sprintf("%s/p/%d", base, i)
		resp, req := responses[u], requests[u]
		if resp.ID == "" || req.Method != "GET" || req.ConcurrentTo != resp.ID {
			t.Errorf("%s: response %q, request %+v; want both, the request concurrent to the response", u, resp.ID, req)
		}
	}
}

// TestWARC_diskFull: a full disk is an error that says so; the file keeps
// its whole records only, and once there is room the records go in.
func TestWARC_diskFull(t *testing.T) {
	site := latin1Site(t)
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Fatalf("mount a small tmpfs (the test runs as root, as CI does): %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", mnt, err, out)
		}
	})
	dir := filepath.Join(mnt, "warc")
	w := openTestWARC(t, dir, "")
	recs := fetchExchanges(t, site.URL, 40)
	for _, err := range w.Put(context.Background(), recs[:10]) {
		if err != nil {
			t.Fatal(err)
		}
	}
	filler := filepath.Join(mnt, "filler")
	fill(t, filler)
	errs := w.Put(context.Background(), recs[10:])
	for i, err := range errs {
		if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "no space left on device") {
			t.Fatalf("record %d on a full disk: %v, want ENOSPC", i, err)
		}
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	for _, err := range w.Put(context.Background(), recs[10:]) {
		if err != nil {
			t.Fatalf("with room again: %v", err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files := warcFiles(t, dir)
	checkWARCRecords(t, testenv.ReadWARC(t, files...), files, site.URL, len(recs))
}

// fill writes to path until the disk is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return
		}
	}
}
