package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// ItemCount is what the processes' item and failure files hold of a
// crawl, checked against the pages a correct crawl stores: each stored
// exactly once.
type ItemCount struct {
	// Expected is the detail pages a correct crawl stores.
	Expected int
	// Stored is how many of them the item files hold.
	Stored int
	// Records is the item records, Duplicates the records beyond the first
	// of their URL, and Unexpected the URLs stored that are not among the
	// expected.
	Records, Duplicates, Unexpected int
	// Failures is the failure records; LoopFailures the redirect loop's,
	// by reason, its URLs written as URL (one reason for every host).
	Failures     int
	LoopFailures map[string]int
}

// ExactlyOnce reports whether every expected page was stored, once, and
// nothing else.
func (c ItemCount) ExactlyOnce() bool {
	return c.Stored == c.Expected && c.Duplicates == 0 && c.Unexpected == 0
}

// failuresSuffix ends a process's failure file, beside its items
// (store.FailuresPath).
const failuresSuffix = ".failed.jsonl"

// countItems reads every JSON Lines item file in dir (one per process)
// and the failure files beside them; expected holds the pages to store as
// host:port and path with query (urlKey).
func countItems(dir string, expected map[string]bool) (ItemCount, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return ItemCount{}, fmt.Errorf("count items: %w", err)
	}
	c := ItemCount{Expected: len(expected), LoopFailures: map[string]int{}}
	seen := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, failuresSuffix) {
			err = eachRecord(f, c.addFailure)
		} else {
			err = eachRecord(f, func(r record) { c.addItem(r, seen, expected) })
		}
		if err != nil {
			return c, err
		}
	}
	return c, nil
}

// record is what the count reads of an item or failure record.
type record struct {
	URL    string `json:"url"`
	Reason string `json:"reason"`
}

func (c *ItemCount) addItem(r record, seen, expected map[string]bool) {
	c.Records++
	key := urlKey(r.URL)
	switch {
	case seen[key]:
		c.Duplicates++
		return
	case expected[key]:
		c.Stored++
	default:
		c.Unexpected++
	}
	seen[key] = true
}

func (c *ItemCount) addFailure(r record) {
	c.Failures++
	if u, err := url.Parse(r.URL); err == nil && strings.HasPrefix(u.Path, "/loop/") {
		c.LoopFailures[siteURL.ReplaceAllString(r.Reason, "URL")]++
	}
}

// siteURL matches a URL of the sites in a failure's reason, the quotes
// and colon around it aside.
var siteURL = regexp.MustCompile(`https?://[^\s"]+[^\s":]`)

// urlKey is a URL's host:port and path with query, or the URL itself when
// it does not parse.
func urlKey(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.Host + u.RequestURI()
}

// eachRecord calls fn with every record of a JSON Lines file.
func eachRecord(path string, fn func(record)) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("count items: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return fmt.Errorf("count items: %s: %w", filepath.Base(path), err)
		}
		fn(r)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("count items: %s: %w", filepath.Base(path), err)
	}
	return nil
}
