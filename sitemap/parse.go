package sitemap

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Limits of one sitemap file, as the sitemaps.org protocol sets them.
const (
	MaxURLs  = 50_000
	MaxBytes = 50 << 20 // uncompressed
)

// Entry is one <url> of a <urlset> (a page) or one <sitemap> of a
// <sitemapindex> (another sitemap), or one line of a text sitemap.
type Entry struct {
	// Loc is the URL as the sitemap writes it.
	Loc string
	// LastMod is when it last changed; zero when the sitemap does not say
	// or says it in a form the protocol does not allow.
	LastMod time.Time
}

// File is one parsed sitemap file.
type File struct {
	// Index is true for a <sitemapindex>: its entries are sitemaps.
	Index bool
	// Entries are the pages (or, in an index, the sitemaps) in file order.
	Entries []Entry
	// Truncated says the file held more than MaxURLs entries or
	// MaxBytes bytes; what lies beyond was not read.
	Truncated bool
}

// ErrNotSitemap is returned for a body that is neither a <urlset>, a
// <sitemapindex> nor a text sitemap.
var ErrNotSitemap = errors.New("not a sitemap")

// Parse reads a sitemap file: a <urlset>, a <sitemapindex>, or a text
// file of one URL per line, gzipped or not (whatever its name or content
// type says). It reads at most MaxBytes once unzipped and MaxURLs
// entries.
func Parse(body []byte) (*File, error) {
	return parse(body, limits{urls: MaxURLs, bytes: MaxBytes})
}

// limits are what one file may hold.
type limits struct {
	urls  int
	bytes int64
}

func parse(body []byte, lim limits) (*File, error) {
	var r io.Reader = bytes.NewReader(body)
	if len(body) >= 2 && body[0] == 0x1f && body[1] == 0x8b {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("sitemap: gunzip: %w", err)
		}
		defer zr.Close()
		r = zr
	}
	cr := &cappedReader{r: r, left: lim.bytes}
	br := bufio.NewReader(cr)
	head, _ := br.Peek(512)
	var f *File
	var err error
	if looksXML(head) {
		f, err = parseXML(br, lim.urls)
	} else {
		f, err = parseText(br, lim.urls)
	}
	if err != nil {
		return nil, err
	}
	f.Truncated = f.Truncated || cr.cut
	return f, nil
}

// looksXML reports whether a body starts, after a byte-order mark and
// white space, with '<'.
func looksXML(head []byte) bool {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	head = bytes.TrimLeft(head, " \t\r\n")
	return len(head) > 0 && head[0] == '<'
}

// parseXML reads a <urlset> or <sitemapindex>, by local names, whatever
// the namespace.
func parseXML(r io.Reader, maxURLs int) (*File, error) {
	d := xml.NewDecoder(r)
	d.Strict = false
	d.CharsetReader = func(_ string, in io.Reader) (io.Reader, error) { return in, nil }
	f := &File{}
	root := ""
	var cur *Entry
	depth, entryDepth := 0, 0 // an entry's own loc and lastmod are at entryDepth+1
	var text strings.Builder
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			if root != "" {
				f.Truncated = true // a cut or broken tail: keep what came before
				break
			}
			return nil, fmt.Errorf("sitemap: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			name := t.Name.Local
			switch {
			case root == "":
				if name != "urlset" && name != "sitemapindex" {
					return nil, fmt.Errorf("sitemap: <%s>: %w", name, ErrNotSitemap)
				}
				root, f.Index = name, name == "sitemapindex"
			case cur == nil && (name == "url" || name == "sitemap"):
				cur, entryDepth = &Entry{}, depth
			}
			text.Reset()
		case xml.CharData:
			text.Write(t)
		case xml.EndElement:
			depth--
			if cur == nil {
				continue
			}
			switch own := depth == entryDepth; {
			case own && t.Name.Local == "loc":
				cur.Loc = strings.TrimSpace(text.String())
			case own && t.Name.Local == "lastmod":
				cur.LastMod = parseLastMod(strings.TrimSpace(text.String()))
			case depth == entryDepth-1:
				if cur.Loc != "" {
					if len(f.Entries) == maxURLs {
						f.Truncated = true
						return f, nil
					}
					f.Entries = append(f.Entries, *cur)
				}
				cur = nil
			}
		}
	}
	if root == "" {
		return nil, fmt.Errorf("sitemap: %w", ErrNotSitemap)
	}
	return f, nil
}

// parseText reads a text sitemap: one absolute URL per line.
func parseText(r io.Reader, maxURLs int) (*File, error) {
	f := &File{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if !strings.HasPrefix(line, "http://") && !strings.HasPrefix(line, "https://") {
			return nil, fmt.Errorf("sitemap: line %q: %w", truncate(line), ErrNotSitemap)
		}
		if len(f.Entries) == maxURLs {
			f.Truncated = true
			break
		}
		f.Entries = append(f.Entries, Entry{Loc: line})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("sitemap: %w", err)
	}
	return f, nil
}

func truncate(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// lastModLayouts are the W3C datetime forms the protocol allows.
var lastModLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00", "2006-01-02", "2006-01", "2006"}

func parseLastMod(s string) time.Time {
	for _, l := range lastModLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// cappedReader reads at most left bytes, then reports EOF and that it
// cut the stream.
type cappedReader struct {
	r    io.Reader
	left int64
	cut  bool
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		if n, _ := c.r.Read(one[:]); n > 0 {
			c.cut = true
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}
