package store

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
)

// ExportFilesAs merges the JSON Lines items files of a cluster without
// MongoDB (one per slave, --output) and writes job's items to w in format
// f, as ExportItemsAs does from MongoDB: each item once, by its ID (the
// record of its latest round, the last of that round), sorted by URL. An
// empty job means every job's items. It returns how many it wrote.
func ExportFilesAs(paths []string, job string, w io.Writer, f Format) (int, error) {
	latest := map[string]Item{}
	for _, p := range paths {
		if err := readItemsFile(p, job, latest); err != nil {
			return 0, err
		}
	}
	items := make([]Item, 0, len(latest))
	fieldSet := map[string]bool{}
	for _, it := range latest {
		items = append(items, it)
		for name := range it.Fields {
			fieldSet[name] = true
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].URL < items[j].URL })
	fields := make([]string, 0, len(fieldSet))
	for name := range fieldSet {
		fields = append(fields, name)
	}
	sort.Strings(fields)
	iw := NewItemWriter(w, f, fields)
	for i, it := range items {
		if err := iw.Write(it); err != nil {
			return i, fmt.Errorf("write item: %w", err)
		}
	}
	return len(items), iw.Close()
}

// readItemsFile adds the items of one JSON Lines file to latest, by ID,
// keeping the record of the latest round. A torn last line (a crash mid
// write) is skipped, as OpenFile cuts it off.
func readItemsFile(path, job string, latest map[string]Item) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var it Item
		if err := json.Unmarshal(sc.Bytes(), &it); err != nil {
			continue // a torn line, or not an item
		}
		if it.URL == "" || it.Fingerprint == "" || (job != "" && it.Job != job) {
			continue
		}
		it.ID = ItemID(it.Job, it.Fingerprint)
		if old, ok := latest[it.ID]; !ok || it.Round >= old.Round {
			latest[it.ID] = it
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}
