// Package storetest is the contract every item store keeps, as one suite
// run over each of them (MongoDB, the batch writer, the files): what a
// slave relies on when it stores an item and then acknowledges its task.
//
//   - A save that returns nil is in the storage: a reader sees it at once.
//   - Saves are idempotent by ID within a round: a redelivered task
//     replaces its record or is skipped, it never makes a second one;
//     concurrent saves too.
//   - A re-crawl (the page saved again in a later round, Item.Round) is
//     kept: the page's current record (its only one, or the last one in a
//     file, which keeps one record per round) is the later round's.
//   - DeleteFailure succeeds, and removes the record where the storage can.
//   - A reopened store (a restarted process) keeps what was there and still
//     makes no second record of a page in a round, and keeps a re-crawl.
//   - Saves after Close fail.
package storetest

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/store"
)

// Store is the store under test: what masters and slaves write through,
// and Close.
type Store interface {
	SaveItem(ctx context.Context, it store.Item) error
	SaveFailure(ctx context.Context, f store.Failure) error
	DeleteFailure(ctx context.Context, id string) error
	Close(ctx context.Context) error
}

// Backend is one storage under test and the way to look inside it.
type Backend struct {
	// Open opens a store on the storage. Called again after Close, it
	// opens the same storage, as a restarted process does.
	Open func(t *testing.T) Store
	// Items reads the job's items as a reader outside the store sees them
	// now (the store may still be open).
	Items func(t *testing.T, job string) []store.Item
	// Failures reads the job's failure records the same way.
	Failures func(t *testing.T, job string) []store.Failure
	// AppendOnly is true when records cannot be removed or replaced (a
	// file): the suite then checks only that DeleteFailure succeeds, and
	// that a re-crawled page has one record per round, the last one the
	// latest round's.
	AppendOnly bool
}

// Run runs the contract; newBackend makes a fresh, empty storage for each
// subtest.
func Run(t *testing.T, newBackend func(t *testing.T) Backend) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, b Backend)
	}{
		{"nil means stored", testVisible},
		{"SaveItem is idempotent by ID", testItemIdempotent},
		{"SaveFailure is idempotent by ID", testFailureIdempotent},
		{"DeleteFailure", testDeleteFailure},
		{"jobs are apart", testJobsApart},
		{"concurrent saves", testConcurrent},
		{"reopen", testReopen},
		{"a re-crawl is kept", testRecrawl},
		{"a re-crawl after a reopen is kept", testRecrawlReopen},
		{"saves after Close fail", testClosed},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newBackend(t)) })
	}
}

// Item is the suite's item number n of job: URL .../page/n, fingerprint
// fp-n, fields title and tags.
func Item(job string, n int, title string) store.Item {
	fp := "fp-" + strconv.Itoa(n)
	return store.Item{
		ID: store.ItemID(job, fp), URL: "http://example.test/page/" + strconv.Itoa(n), Job: job, Fingerprint: fp,
		Fields:    map[string]any{"title": title, "tags": []string{"a", "b,c"}},
		FetchedAt: time.Date(2025, 6, 7, 8, 9, 10, 0, time.UTC), Status: 200, Round: 1,
	}
}

// ItemOfRound is Item fetched by crawl round round (Item's is 1).
func ItemOfRound(job string, n int, round int64, title string) store.Item {
	it := Item(job, n, title)
	it.Round = round
	return it
}

// Failure is the suite's failure of page n of job.
func Failure(job string, n int, reason string) store.Failure {
	return store.Failure{
		ID: store.ItemID(job, "fp-"+strconv.Itoa(n)), URL: "http://example.test/page/" + strconv.Itoa(n), Job: job,
		Kind: store.KindDetail, Reason: reason, Status: 503, Attempts: 4, Transient: true,
		FailedAt: time.Date(2025, 6, 7, 8, 9, 10, 0, time.UTC), Round: 1,
	}
}

func ctxOf(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// open opens a store that the test closes at its end unless it did.
func open(t *testing.T, b Backend) Store {
	t.Helper()
	s := b.Open(t)
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

func mustClose(t *testing.T, s Store) {
	t.Helper()
	if err := s.Close(ctxOf(t)); err != nil {
		t.Fatalf("Close: %v", err)
	}
}
