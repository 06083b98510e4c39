package neardup

// keys names the index's Redis keys under the caller's namespace.
type keys struct{ ns string }

// logStem is the start of every generation's log key; lua/commit.lua
// appends the generation's number, as log does. (The index kept its
// entries in ns:gen:* hashes, and before those in ns:zband:* and ns:id:*
// keys; a running job's old keys expire by themselves a window after its
// last add, and the entries in them are not found.)
func (k keys) logStem() string { return k.ns + ":log:" }
