package neardup

// Duplicate reports whether the page duplicates an earlier entry.
func (r Result) Duplicate() bool { return r.Of != "" }

// Options returns the index's options.
func (x *Index) Options() Options { return x.opts }
