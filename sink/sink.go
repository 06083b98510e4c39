package sink

import (
	"context"
	"errors"

	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/store"
)

// Record is one item on its way to the sinks.
type Record struct {
	// Item is the page's item. For a NotModified page it carries the
	// identity, URL and validators, no fields.
	Item store.Item
	// NotModified is true when the site answered 304: the page is as the
	// sink last took it; only its fetch time is news.
	NotModified bool
	// Retried is true when the page failed before (client retry-failed):
	// a sink drops its failure record as it takes the item.
	Retried bool
	// Exchange is the page's request and answer as they went over the
	// wire, when a sink archives them (Archiver); nil otherwise, and for
	// a page that answered 304 or was rendered in a browser.
	Exchange *fetch.Exchange
}

// Archiver is a Sink that archives what went over the wire
// (Record.Exchange): with one, the slave keeps it for each page.
type Archiver interface {
	Sink
	KeepsExchanges() bool
}

// Sink is a place items go.
type Sink interface {
	// Put writes recs and returns one error per record, nil where the
	// record is taken (durable in the sink). An error wrapping ErrRefused
	// is for good (the sink cannot take that record); any other is worth
	// trying again.
	Put(ctx context.Context, recs []Record) []error
	// PutFailure records a page that gave no item, replacing an earlier
	// record of the same page.
	PutFailure(ctx context.Context, f store.Failure) error
	// Close flushes what the sink holds and releases its connections.
	Close() error
}

// ErrRefused marks a record a sink will never take (a value the server
// rejects): trying again cannot help.
var ErrRefused = errors.New("refused by the sink")
