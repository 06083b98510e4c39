package fetch

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/andybalholm/brotli"
	"golang.org/x/net/html/charset"
)

// acceptEncoding is sent with every request; the fetcher decodes all three
// itself (Go's transport only decodes gzip, and only when it asked).
const acceptEncoding = "gzip, deflate, br"

// maxEncodings bounds the stacked Content-Encodings a body may have.
const maxEncodings = 3

// capReader fails with ErrTooLarge once more than n bytes come through.
type capReader struct {
	r io.Reader
	n int64 // bytes still allowed
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.n < 0 {
		return 0, fmt.Errorf("%w (as sent)", ErrTooLarge)
	}
	if int64(len(p)) > c.n+1 {
		p = p[:c.n+1]
	}
	n, err := c.r.Read(p)
	c.n -= int64(n)
	if c.n < 0 {
		return n, fmt.Errorf("%w (as sent)", ErrTooLarge)
	}
	return n, err
}

// decodeContent undoes the Content-Encoding values of an answer, last
// applied first. The raw stream is capped at limit bytes too.
func decodeContent(body io.Reader, encodings []string, limit int64) (io.Reader, error) {
	var codings []string
	for _, v := range encodings {
		for c := range strings.SplitSeq(v, ",") {
			if c = strings.ToLower(strings.TrimSpace(c)); c != "" && c != "identity" {
				codings = append(codings, c)
			}
		}
	}
	if len(codings) > maxEncodings {
		return nil, fmt.Errorf("%w: %d stacked encodings", ErrUnsupportedEncoding, len(codings))
	}
	r := io.Reader(&capReader{r: body, n: limit})
	for i := len(codings) - 1; i >= 0; i-- {
		var err error
		if r, err = decoder(codings[i], r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func decoder(coding string, r io.Reader) (io.Reader, error) {
	switch coding {
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return zr, nil
	case "deflate":
		return deflateReader(r)
	case "br":
		return brotli.NewReader(r), nil
	}
	return nil, fmt.Errorf("%w: %q", ErrUnsupportedEncoding, coding)
}

// deflateReader reads "deflate" as RFC 9110 defines it (zlib) or as many
// servers send it (raw DEFLATE), telling them apart by the zlib header.
func deflateReader(r io.Reader) (io.Reader, error) {
	br := bufio.NewReader(r)
	head, _ := br.Peek(2)
	if len(head) == 2 && head[0]&0x0f == 8 && (uint16(head[0])<<8|uint16(head[1]))%31 == 0 {
		zr, err := zlib.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("deflate: %w", err)
		}
		return zr, nil
	}
	return flate.NewReader(br), nil
}

// readLimited reads r to the end, failing with ErrTooLarge past limit bytes.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	return readSized(r, limit, 0)
}

// minRead is the buffer a body of unknown size is read into first; it
// grows as io.ReadAll's does.
const minRead = 512

// readSized is readLimited for a body of about size bytes (0: unknown,
// as the Content-Length of an encoded body says nothing of the decoded
// one): its buffer is allocated once at that size, where io.ReadAll
// starts at 512 bytes and copies the body at every doubling. A size that
// is wrong costs only growth, never a byte.
func readSized(r io.Reader, limit, size int64) ([]byte, error) {
	b, err := readUpTo(r, limit, size)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w (%d bytes)", ErrTooLarge, limit)
	}
	return b, nil
}

// readCut is readSized for a body that may be longer than limit: it is
// cut there (as sent or once decompressed, whichever passes it first),
// and cut says so.
func readCut(r io.Reader, limit, size int64) (body []byte, cut bool, err error) {
	b, err := readUpTo(r, limit, size)
	switch {
	case errors.Is(err, ErrTooLarge):
		cut = true
	case err != nil:
		return nil, false, err
	}
	if int64(len(b)) > limit {
		b, cut = b[:limit], true
	}
	return b, cut, nil
}

// readUpTo reads r to the end or to limit+1 bytes, into a buffer of
// about size bytes first (see readSized). On an error it returns what it
// read before it.
func readUpTo(r io.Reader, limit, size int64) ([]byte, error) {
	size = min(max(size, minRead), limit) + 1 // +1: room to see the end without growing
	b := make([]byte, 0, size)
	lr := io.LimitReader(r, limit+1)
	for {
		n, err := lr.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, fmt.Errorf("read body: %w", err)
		}
		if len(b) == cap(b) {
			b = grow(b, limit+1)
		}
	}
}

// grow doubles b's room, up to max bytes. append grows a large slice by
// a quarter at a time, copying it each time: a body of 50 MiB read that
// way leaves about four times its size of garbage behind, doubling about
// one time its size.
func grow(b []byte, max int64) []byte {
	nb := make([]byte, len(b), min(2*int64(cap(b)), max))
	copy(nb, b)
	return nb
}

// decodeCharset converts body to UTF-8 using the Content-Type header, the
// BOM or a <meta charset>, as browsers do; invalid UTF-8 sequences become
// U+FFFD, as in a browser, so that every string extracted is valid UTF-8.
func decodeCharset(body []byte, contentType string) ([]byte, error) {
	enc, name, _ := charset.DetermineEncoding(body, contentType)
	if name == "utf-8" {
		if !utf8.Valid(body) {
			body = bytes.ToValidUTF8(body, []byte("\uFFFD"))
		}
		return body, nil
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", name, err)
	}
	return out, nil
}
