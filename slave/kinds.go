package slave

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/extract"
	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/ledger"
	"github.com/crawler-dev/crawler/neardup"
	"github.com/crawler-dev/crawler/store"
)

// jsonKind reports whether the pages of kind are JSON (fetched as they
// are, not skipped as not HTML).
func (j *job) jsonKind(kind string) bool {
	k := j.rules.Kind(kind)
	return k != nil && k.JSON
}

// errMissingField is the cause of an item that lacks a required field.
var errMissingField = errors.New(extract.FailureMissingField)

// extraction is what an item page yields: its fields, the links its rules
// found and the simhash of its text: the fields' text, or the page's when
// no field holds any.
type extraction struct {
	*extract.Result
	simhash uint64
}

// extract runs the rules of the item kind on the page. A page of a kind
// the job does not have, one that cannot be read, or one without a
// required field is an error: the page fails. One without a required
// field still returns its links (Result), which are followed whatever
// the item's fate.
func (j *job) extract(ctx context.Context, kind string, page *fetch.Page) (extraction, error) {
	k := j.rules.Kind(kind)
	if k == nil || !k.Item {
		return extraction{}, fmt.Errorf("the job has no item kind %q", kind)
	}
	var out extraction
	var err error
	var doc *extract.Document // nil for a JSON kind
	if k.JSON {
		out.Result, err = k.Extract(ctx, page.URL, page.Body)
	} else {
		if doc, err = extract.ParseContext(ctx, page.URL, page.Body); err == nil {
			out.Result, err = k.ExtractDocument(ctx, doc)
		}
	}
	if err != nil {
		return extraction{}, err
	}
	if len(out.Missing) > 0 {
		return out, fmt.Errorf("%w: %s", errMissingField, strings.Join(out.Missing, ", "))
	}
	var text bool
	if out.simhash, text = fieldSimhash(out.Fields); !text && doc != nil {
		out.simhash = neardup.Simhash(doc.Text())
	}
	return out, nil
}

// foundEntry is the Found entry of an item page: the links it holds and
// what its rules matched, for the master to route and count. The short
// form's detail pages hold no link rules and send none.
func (j *job) foundEntry(t cluster.Task, res *extract.Result) string {
	if len(res.Found) == 0 && j.spec.ShortForm() {
		return ""
	}
	f := cluster.FoundLinks{Page: t.URL, Kind: t.ItemKind(), Round: t.Round, RuleFound: res.Found, Empty: res.Empty}
	for _, l := range res.Links {
		f.Links = append(f.Links, cluster.FoundLink{URL: l.URL, Kind: l.Kind, Priority: l.Priority})
	}
	return f.Encode()
}

// answeredError is an extraction's error on a page that answered with
// status: the failure records the status, not 0.
type answeredError struct {
	status int
	err    error
}

// Error is the extraction's error alone.
func (e *answeredError) Error() string { return e.err.Error() }

// Unwrap returns the extraction's error.
func (e *answeredError) Unwrap() error { return e.err }

// extractFailure is the record of an item page that yields no item; one
// without a required field is of kind missing_field, one past its
// extraction budget of kind extract_limit.
func (s *Slave) extractFailure(w *work, cause error, tries int) store.Failure {
	f := s.failure(w, cause, tries, false)
	var answered *answeredError
	if errors.As(cause, &answered) {
		f.Status = answered.status
	}
	switch {
	case errors.Is(cause, errMissingField):
		f.Kind = extract.FailureMissingField
	case extract.FailureKind(cause) != "":
		f.Kind = extract.FailureKind(cause)
	}
	return f
}

// itemKindName is the kind an item of the task records: its kind in a job
// written with kinds, none in the short form.
func (j *job) itemKindName(t cluster.Task) string {
	if j.spec.ShortForm() {
		return ""
	}
	return t.ItemKind()
}

// kindCounts adds to an outcome of task t the per-kind stats fields it
// counts in, in a job of several item kinds (with one, the job's counters
// are the kind's): stored, failed or skipped, as the job's; and recovered
// when a page client retry-failed tried again leaves failed (a page
// failed again stays failed, counted once).
func (j *job) kindCounts(t cluster.Task, o ledger.Outcome) ledger.Outcome {
	if !j.byKind {
		return o
	}
	kind := t.ItemKind()
	switch {
	case o.Failed && o.Retried:
		return o
	case o.Failed:
		o.Counts = append(o.Counts, cluster.KindStat(kind, cluster.KindFailed))
	case o.Skipped != "":
		o.Counts = append(o.Counts, cluster.KindStat(kind, cluster.KindSkipped))
	default:
		o.Counts = append(o.Counts, cluster.KindStat(kind, cluster.KindStored))
	}
	if o.Retried {
		o.Counts = append(o.Counts, cluster.KindStat(kind, cluster.KindRecovered))
	}
	return o
}
