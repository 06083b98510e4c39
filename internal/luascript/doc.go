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
// Hash field and key names are passed in as ARGV or KEYS from the cluster
// package's constants, never retyped as Lua string literals.
package luascript
