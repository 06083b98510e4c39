package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/crawler-dev/crawler/internal/redact"
)

// MaxSourceBytes bounds what one source may hold.
const MaxSourceBytes = 16 << 20

// SourceStats counts what one source held.
type SourceStats struct {
	// Source is the file name or URL as configured, its credentials
	// (userinfo, secret query values such as token=) redacted.
	Source string `json:"source"`
	// Proxies is the number of valid proxy lines (duplicates included).
	Proxies int `json:"proxies"`
	// Comments is the number of # comment lines.
	Comments int `json:"comments"`
	// Junk is the number of lines that are neither blank, a comment nor a
	// proxy; they are skipped.
	Junk int `json:"junk"`
	// Err is why the source could not be read, if it could not.
	Err string `json:"error,omitempty"`
}

// ParseSource reads one proxy per line from r. Blank lines are skipped,
// lines starting with # are comments, and anything after " #" on a line is
// a comment too; every other line that Parse refuses is counted as junk
// and skipped. Duplicate proxies are returned once.
func ParseSource(r io.Reader) ([]Proxy, SourceStats, error) {
	var (
		st   SourceStats
		out  []Proxy
		seen = map[ID]bool{}
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if i := strings.Index(line, " #"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, "#"):
			st.Comments++
			continue
		}
		p, err := Parse(line)
		if err != nil {
			st.Junk++
			continue
		}
		st.Proxies++
		if !seen[p.ID()] {
			seen[p.ID()] = true
			out = append(out, p)
		}
	}
	if err := sc.Err(); err != nil {
		return out, st, fmt.Errorf("read proxy list: %w", err)
	}
	return out, st, nil
}

// ReadSources reads every source, a file name or an http(s) URL, and
// returns their proxies, each once, with one SourceStats per source in
// order. A source that cannot be read is reported in its stats and joined
// into the error; the proxies of the others are still returned. client nil
// means a client with a 30s timeout.
func ReadSources(ctx context.Context, client *http.Client, sources []string) ([]Proxy, []SourceStats, error) {
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	var (
		all   []Proxy
		stats = make([]SourceStats, len(sources))
		seen  = map[ID]bool{}
		errs  []error
	)
	for i, src := range sources {
		ps, st, err := readSource(ctx, client, src)
		st.Source = redact.URL(src)
		if err != nil {
			err = errors.New(redact.Text(err.Error(), src))
			st.Err = err.Error()
			errs = append(errs, fmt.Errorf("proxy source %s: %w", st.Source, err))
		}
		stats[i] = st
		for _, p := range ps {
			if !seen[p.ID()] {
				seen[p.ID()] = true
				all = append(all, p)
			}
		}
	}
	return all, stats, errors.Join(errs...)
}

func readSource(ctx context.Context, client *http.Client, src string) ([]Proxy, SourceStats, error) {
	rc, err := openSource(ctx, client, src)
	if err != nil {
		return nil, SourceStats{}, err
	}
	defer rc.Close()
	return ParseSource(io.LimitReader(rc, MaxSourceBytes))
}

func openSource(ctx context.Context, client *http.Client, src string) (io.ReadCloser, error) {
	if !strings.HasPrefix(src, "http://") && !strings.HasPrefix(src, "https://") {
		f, err := os.Open(src)
		if err != nil {
			return nil, fmt.Errorf("open: %w", err)
		}
		return f, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
	if err != nil {
		return nil, errors.New("bad URL")
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("get: %w", errors.Unwrap(err)) // *url.Error would repeat the URL
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("get: http status %d", resp.StatusCode)
	}
	return resp.Body, nil
}
