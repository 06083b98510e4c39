package sitemap

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Limits of one sitemap file, as the sitemaps.org protocol sets them, and
// how deeply its elements may nest (a sitemap with extensions nests 5).
const (
	MaxURLs    = 50_000
	MaxBytes   = 50 << 20 // uncompressed
	MaxNesting = 32
)

// maxText bounds the text kept of one element: a loc holds at most 2,048
// characters, a lastmod a date.
const maxText = 8 << 10

// checkEvery is how many tokens or lines pass between looks at the
// context.
const checkEvery = 1 << 12

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
	// MaxBytes bytes, nested elements deeper than MaxNesting, broke off,
	// or was the beginning of a longer file (ErrCut); what lies beyond was
	// not read.
	Truncated bool
}

// ErrNotSitemap is returned for a body that is neither a <urlset>, a
// <sitemapindex> nor a text sitemap.
var ErrNotSitemap = errors.New("not a sitemap")

// Parse reads a sitemap file: a <urlset>, a <sitemapindex>, or a text
// file of one URL per line, gzipped or not (whatever its name or content
// type says). It reads at most MaxBytes once unzipped, MaxURLs entries and
// elements MaxNesting deep (a 50 KB gzipped file of nested elements took
// 1.8 GB and 34 s), and stops with ctx's error when ctx is done.
func Parse(ctx context.Context, body []byte) (*File, error) {
	return parse(ctx, body, limits{urls: MaxURLs, bytes: MaxBytes})
}

// limits are what one file may hold, and whether the body given is the
// beginning of a longer file (cut).
type limits struct {
	urls  int
	bytes int64
	cut   bool
}

func parse(ctx context.Context, body []byte, lim limits) (*File, error) {
	var r io.Reader = bytes.NewReader(body)
	if len(body) >= 2 && body[0] == 0x1f && body[1] == 0x8b {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("sitemap: gunzip: %w", err)
		}
		defer zr.Close()
		r = zr
		if lim.cut { // the compressed stream breaks off where the body was cut
			r = &cutStream{r: zr}
		}
	}
	cr := &cappedReader{r: r, left: lim.bytes}
	tail := &tailReader{r: cr}
	br := bufio.NewReader(tail)
	head, _ := br.Peek(512)
	// The last line of a file cut short may have broken off.
	brokeOff := func() bool { return (lim.cut || cr.cut) && tail.last != '\n' }
	var f *File
	var err error
	if looksXML(head) {
		f, err = parseXML(ctx, br, lim.urls)
	} else {
		f, err = parseText(ctx, br, lim.urls, brokeOff)
	}
	if err != nil {
		return nil, err
	}
	f.Truncated = f.Truncated || cr.cut || lim.cut
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
func parseXML(ctx context.Context, r io.Reader, maxURLs int) (*File, error) {
	d := xml.NewDecoder(r)
	d.Strict = false
	d.CharsetReader = func(_ string, in io.Reader) (io.Reader, error) { return in, nil }
	x := &xmlReader{f: &File{}, maxURLs: maxURLs}
	for n := 0; ; n++ {
		if n%checkEvery == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			if x.root != "" {
				x.f.Truncated = true // a cut or broken tail: keep what came before
				break
			}
			return nil, fmt.Errorf("sitemap: %w", err)
		}
		done, err := x.token(tok)
		if err != nil {
			return nil, err
		}
		if done {
			return x.f, nil
		}
	}
	if x.root == "" {
		return nil, fmt.Errorf("sitemap: %w", ErrNotSitemap)
	}
	return x.f, nil
}

// xmlReader reads the entries of a sitemap one token at a time.
type xmlReader struct {
	f                 *File
	maxURLs           int
	root              string
	cur               *Entry
	depth, entryDepth int // an entry's own loc and lastmod are at entryDepth+1
	text              strings.Builder
}

// token reads one token; done means the file is read as far as it will be.
func (x *xmlReader) token(tok xml.Token) (done bool, err error) {
	switch t := tok.(type) {
	case xml.StartElement:
		return x.start(t.Name.Local)
	case xml.CharData:
		if x.cur != nil && x.text.Len()+len(t) <= maxText {
			x.text.Write(t)
		}
	case xml.EndElement:
		return x.end(t.Name.Local), nil
	}
	return false, nil
}

// start reads a start tag. The decoder keeps a name for each open
// element: deeper than MaxNesting, the rest of the file is not read.
func (x *xmlReader) start(name string) (done bool, err error) {
	if x.depth++; x.depth > MaxNesting {
		x.f.Truncated = true
		return true, nil
	}
	switch {
	case x.root == "":
		if name != "urlset" && name != "sitemapindex" {
			return false, fmt.Errorf("sitemap: <%s>: %w", name, ErrNotSitemap)
		}
		x.root, x.f.Index = name, name == "sitemapindex"
	case x.cur == nil && (name == "url" || name == "sitemap"):
		x.cur, x.entryDepth = &Entry{}, x.depth
	}
	x.text.Reset()
	return false, nil
}

// end reads an end tag; done when the file holds more than maxURLs.
func (x *xmlReader) end(name string) (done bool) {
	x.depth--
	if x.cur == nil {
		return false
	}
	switch own := x.depth == x.entryDepth; {
	case own && name == "loc":
		x.cur.Loc = strings.TrimSpace(x.text.String())
	case own && name == "lastmod":
		x.cur.LastMod = parseLastMod(strings.TrimSpace(x.text.String()))
	case x.depth == x.entryDepth-1:
		if x.cur.Loc != "" {
			if len(x.f.Entries) == x.maxURLs {
				x.f.Truncated = true
				return true
			}
			x.f.Entries = append(x.f.Entries, *x.cur)
		}
		x.cur = nil
	}
	return false
}

// parseText reads a text sitemap: one absolute URL per line. Its last
// line is left out when brokeOff says the file was cut in it.
func parseText(ctx context.Context, r io.Reader, maxURLs int, brokeOff func() bool) (*File, error) {
	f := &File{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	var last string // a line is read once the next one is, or the end
	have := false
	for n := 0; sc.Scan(); n++ {
		if n%checkEvery == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if have {
			if done, err := f.addLine(last, maxURLs); err != nil {
				return nil, err
			} else if done {
				return f, nil
			}
		}
		last, have = sc.Text(), true
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("sitemap: %w", err)
	}
	if have && !brokeOff() {
		if _, err := f.addLine(last, maxURLs); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// addLine reads one line of a text sitemap; done when the file holds
// more than maxURLs.
func (f *File) addLine(line string, maxURLs int) (done bool, err error) {
	line = strings.TrimSpace(line)
	switch {
	case line == "":
		return false, nil
	case !strings.HasPrefix(line, "http://") && !strings.HasPrefix(line, "https://"):
		return false, fmt.Errorf("sitemap: line %q: %w", truncate(line), ErrNotSitemap)
	case len(f.Entries) == maxURLs:
		f.Truncated = true
		return true, nil
	}
	f.Entries = append(f.Entries, Entry{Loc: line})
	return false, nil
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

// tailReader remembers the last byte read through it.
type tailReader struct {
	r    io.Reader
	last byte
}

func (t *tailReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		t.last = p[n-1]
	}
	return n, err
}

// cutStream reads a decompressed stream whose compressed body was cut
// short: where it breaks off is where the file ends.
type cutStream struct{ r io.Reader }

func (c *cutStream) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = io.EOF
	}
	return n, err
}
