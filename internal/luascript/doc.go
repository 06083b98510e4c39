// Package luascript builds the cluster protocol's Redis scripts. Every step
// of the protocol (take a task, acknowledge it, commit a list page, pick a
// proxy, ...) is one atomic Lua script kept as a .lua file beside the Go
// that runs it and embedded with go:embed. Load puts the one shared prelude
// in front of it (the server clock, integer formatting, error replies), so
// no script carries its own copy.
//
// Errors follow one convention: a script fails with
//
//	return fail('FENCED', 'job owned by another master')
//
// an error reply whose first word is a code. Codes.Translate maps the code
// to the calling package's sentinel error, so callers use errors.Is and
// nobody matches error text.
//
// Constants reach Lua one way. A package declares a Set: its embedded
// files, its Consts and its Codes. Set.Load writes every constant as a
// local in the script's header (local F_STATE = 'state', local R_HELD =
// -1), from the Go value (a cluster constant, an outcome the Go caller
// compares against), so hash field names, states, prefixes and reply codes
// are never passed as ARGV or retyped as Lua literals. The tests of this
// package load every package's scripts and fail when a script reads an
// ALL_CAPS name nothing defines (a renamed constant), fails with a code its
// package does not translate, replies with a bare negative number, or when
// a constant is read by none of its package's scripts.
package luascript
