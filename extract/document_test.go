package extract

// The Document's own Links and Fields calls, with one budget for a page:
// the extractor's first API, which the tests and fuzz targets still drive
// as an oracle beside Kind.Extract; the crawler extracts through kinds.

import (
	"context"
	"net/url"

	"github.com/crawler-dev/crawler/jobspec"
)

// Base is the URL relative links are resolved against.
func (d *Document) Base() *url.URL { return d.base }

// Elements is the number of elements of the page.
func (d *Document) Elements() int { return len(d.t.nodes) }

// legacyPage is the page the Links and Fields calls share, with
// DefaultBudget.
func (d *Document) legacyPage() *page {
	if d.legacy == nil {
		ctx := d.ctx
		if ctx == nil {
			ctx = context.Background()
		}
		d.legacy = d.page(ctx, DefaultBudget)
	}
	return d.legacy
}

// Err reports why a Links or Fields call returned nothing: ErrLimit when
// the calls on this document passed DefaultBudget, or the error of the
// context given to ParseContext once it is done. A caller fails the page
// (FailureKind names the failure) rather than keep what the calls gave.
func (d *Document) Err() error {
	if d.legacy == nil {
		return nil
	}
	return d.legacy.m.err
}

// Links returns the raw attribute values selected by rule, in document
// order, without empty values, javascript: and mailto: links and those
// the rule's allow or deny leaves out. They are not yet resolved: callers
// canonicalize them against Base. A rule that does not compile, or work
// past the document's budget (see Err), gives none.
func (d *Document) Links(rule *jobspec.LinkRule) []string {
	if rule == nil {
		return nil
	}
	l, err := compileLink(*rule)
	if err != nil {
		return nil
	}
	p := d.legacyPage()
	refs, err := p.rawLinks(l)
	if err != nil {
		return nil
	}
	out := refs[:0]
	for _, ref := range refs {
		abs, err := d.base.Parse(ref)
		if err != nil {
			out = append(out, ref)
			continue
		}
		admitted, err := p.admits(l, abs.String())
		if err != nil {
			return nil
		}
		if admitted {
			out = append(out, ref)
		}
	}
	return out
}

// Fields extracts a job's fields: a string for a single match (empty when
// nothing matches), a []string for a rule with All. Attribute values that
// look like URLs (href, src) are resolved to absolute URLs. A rule with a
// type gives its converted value (see Result.Fields); conversion errors
// and missing required fields are not reported here: Kind.Extract reports
// them.
func (d *Document) Fields(rules map[string]jobspec.FieldRule) map[string]any {
	out := make(map[string]any, len(rules))
	res := &Result{Fields: out}
	p := d.legacyPage()
	for name, r := range rules {
		f, err := compileField(name, r)
		if err != nil || p.field(f, res) != nil {
			out[name] = emptyValue(r)
		}
	}
	return out
}

// emptyValue is a field's value when nothing could be selected.
func emptyValue(r jobspec.FieldRule) any {
	switch {
	case r.All && (r.Type == "" || r.Type == jobspec.TypeString):
		return []string{}
	case r.All:
		return []any{}
	case r.Type == "" || r.Type == jobspec.TypeString:
		return ""
	}
	return nil
}
