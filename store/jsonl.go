package store

import (
	"io"
	"os"
	"path/filepath"
	"strings"
)

// JSONL is File under its earlier name; OpenJSONL returns one that writes
// JSON Lines whatever the path's extension.
type JSONL = File

// OpenJSONL opens itemsPath for appending items as JSON Lines, and writes
// failures beside it to FailuresPath(itemsPath). What the files hold
// already is kept: see OpenFile.
func OpenJSONL(itemsPath string) (*JSONL, error) {
	return openFile(itemsPath, FormatJSONL, nil, os.Stdout)
}

// FailuresPath is where failures go beside an items file: the items path
// without its .jsonl, .json or .csv extension, plus ".failed.jsonl"
// (items.csv -> items.failed.jsonl). Items on stdout ("-") put their
// failures in failed.jsonl in the working directory.
func FailuresPath(itemsPath string) string {
	if itemsPath == Stdout {
		return "failed.jsonl"
	}
	switch strings.ToLower(filepath.Ext(itemsPath)) {
	case ".jsonl", ".json", ".csv":
		itemsPath = itemsPath[:len(itemsPath)-len(filepath.Ext(itemsPath))]
	}
	return itemsPath + ".failed.jsonl"
}

// openJSONLFile opens a JSON Lines file for appending: it cuts a torn tail
// off, learns the keys of the lines there, and starts the file's writer.
func openJSONLFile(path string, key recordKey) (*lineFile, error) {
	f, size, err := openAppend(path)
	if err != nil {
		return nil, err
	}
	c, err := scanJSONL(io.NewSectionReader(f, 0, size), path, key)
	if err == nil {
		err = cutTail(f, size, c.valid)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return newLineFile(path, f, f, c.keys, c.count), nil
}
