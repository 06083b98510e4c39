package testenv

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// WARCRecord is one record of a WARC file as warcio.js, webrecorder's
// reader (not ours), reads it.
type WARCRecord struct {
	File, Version, Type, ID, URI, ConcurrentTo string
	// PayloadDigest is the record's WARC-Payload-Digest; ComputedDigest
	// the SHA-1 of the payload warcio.js read, in the same form.
	PayloadDigest, ComputedDigest string
	Status                        int
	Method, ContentType           string
	// Payload is the body of a response, or the fields of a warcinfo.
	Payload string
}

// ReadWARC reads WARC files with warcio.js (internal/testenv/warcio, which
// make test installs with npm). It fails the test if warcio.js is missing or
// cannot read a file.
func ReadWARC(t testing.TB, files ...string) []WARCRecord {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(self), "warcio")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "warcio")); err != nil {
		t.Fatalf("testenv: warcio.js is not installed: run `npm ci --prefix %s` (needs node and npm; make test does it)", dir)
	}
	var stderr bytes.Buffer
	cmd := exec.Command("node", append([]string{filepath.Join(dir, "check.mjs")}, files...)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("warcio.js could not read %v: %v\n%s", files, err, stderr.String())
	}
	var recs []WARCRecord
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var r WARCRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("warcio.js printed %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	return recs
}
