package extract

import (
	"context"
	"fmt"
	"sort"

	"github.com/crawler-dev/crawler/jobspec"
)

// Rules is a job's page kinds compiled for extraction: compiled once per
// job, used for every page, safe for concurrent use.
type Rules struct {
	kinds map[string]*Kind
}

// Kind is one page kind's compiled rules.
type Kind struct {
	// Name is the kind's name in the job.
	Name string
	// Item says each page of this kind is an item.
	Item bool
	// JSON says the kind's pages are JSON.
	JSON bool
	// Budget bounds the work of one page; the zero value is DefaultBudget.
	Budget Budget

	links  []*linkRule
	fields []*fieldRule // by name
}

// CompileJob compiles a job's page kinds (the short form's two kinds for a
// job written in the short form).
func CompileJob(spec *jobspec.Job) (*Rules, error) {
	return Compile(spec.PageKinds())
}

// Compile compiles page kinds. Errors name the rule as a job file does
// ("kinds.product.fields.price.css: ...").
func Compile(kinds map[string]jobspec.PageKind) (*Rules, error) {
	r := &Rules{kinds: map[string]*Kind{}}
	for name, pk := range kinds {
		k, err := compileKind(name, pk, kinds)
		if err != nil {
			return nil, err
		}
		r.kinds[name] = k
	}
	return r, nil
}

// Kind returns the compiled kind of that name, or nil.
func (r *Rules) Kind(name string) *Kind { return r.kinds[name] }

// Names returns the kinds' names in order.
func (r *Rules) Names() []string {
	names := make([]string, 0, len(r.kinds))
	for n := range r.kinds {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func compileKind(name string, pk jobspec.PageKind, kinds map[string]jobspec.PageKind) (*Kind, error) {
	k := &Kind{Name: name, Item: pk.Item, JSON: pk.JSONPage()}
	for i, l := range pk.Links {
		lr, err := compileLink(l)
		if err != nil {
			return nil, fmt.Errorf("kinds.%s.links[%d].%w", name, i, err)
		}
		lr.index, lr.priority = i, jobspec.LinkPriority(kinds, l)
		k.links = append(k.links, lr)
	}
	for _, fname := range sortedNames(pk.Fields) {
		fr, err := compileField(fname, pk.Fields[fname])
		if err != nil {
			return nil, fmt.Errorf("kinds.%s.fields.%s.%w", name, fname, err)
		}
		k.fields = append(k.fields, fr)
	}
	return k, nil
}

// LinkRules returns the kind's link rules as the job gives them.
func (k *Kind) LinkRules() []jobspec.LinkRule {
	out := make([]jobspec.LinkRule, len(k.links))
	for i, l := range k.links {
		out[i] = l.spec
	}
	return out
}

// FieldNames returns the names of the kind's fields, in order.
func (k *Kind) FieldNames() []string {
	out := make([]string, len(k.fields))
	for i, f := range k.fields {
		out[i] = f.name
	}
	return out
}

// Result is what one page of a kind yields.
type Result struct {
	// Links are the links the kind's rules found, resolved against the
	// page and canonicalized, each once: a URL found by two rules belongs
	// to the first rule (in the job's order) that claims it.
	Links []Link `json:"links"`
	// Found is how many links each rule selected, before any was dropped:
	// a rule that finds nothing on the pages of its kind is a warning.
	Found []int `json:"found"`
	// Invalid counts the links that are not http(s) URLs; Filtered those a
	// rule's allow or deny left out.
	Invalid  int `json:"invalid"`
	Filtered int `json:"filtered"`
	// Fields are an item kind's fields (nil for other kinds): a string,
	// "" when nothing is selected; with a type, the converted value or nil;
	// with all, a []string, or a []any with a type.
	Fields map[string]any `json:"fields,omitempty"`
	// Empty names the fields that came out empty: they selected nothing,
	// or only elements without text.
	Empty []string `json:"empty,omitempty"`
	// FieldErrors lists the values that did not convert to their type;
	// each is null in Fields and counts as a field error.
	FieldErrors []FieldError `json:"field_errors,omitempty"`
	// Missing names the required fields without a value: the item fails
	// with kind FailureMissingField.
	Missing []string `json:"missing,omitempty"`
	// Work is the work the page took, in the units of Budget.
	Work int64 `json:"work"`
}

// Link is one link found on a page.
type Link struct {
	// URL is the link's canonical URL.
	URL string `json:"url"`
	// Kind is the kind of page it leads to.
	Kind string `json:"kind"`
	// Rule is the index of the rule that found it in the kind's links.
	Rule int `json:"rule"`
	// Priority is the priority of the page it leads to: the rule's, else
	// its kind's (jobspec.LinkPriority).
	Priority int `json:"priority,omitempty"`
}

// FieldError is a value that did not convert to its field's type.
type FieldError struct {
	Field  string `json:"field"`
	Reason string `json:"reason"`
}

// FailureMissingField is the failure kind of an item without a required
// field.
const FailureMissingField = "missing_field"

// Extract runs the kind's rules on a page fetched from pageURL: its links,
// and for an item kind its fields. It fails when the page cannot be read
// (a JSON kind's page that is not JSON), when the work passes the page's
// Budget (ErrLimit) or when ctx is done.
func (k *Kind) Extract(ctx context.Context, pageURL string, body []byte) (*Result, error) {
	p, err := k.open(ctx, pageURL, body)
	if err != nil {
		return nil, err
	}
	return p.extract(k)
}

// ExtractDocument runs the kind's rules on an HTML page already parsed,
// with a budget of its own.
func (k *Kind) ExtractDocument(ctx context.Context, doc *Document) (*Result, error) {
	if k.JSON {
		return nil, fmt.Errorf("kind %s reads JSON pages, not HTML", k.Name)
	}
	return doc.page(ctx, k.Budget).extract(k)
}

func (k *Kind) open(ctx context.Context, pageURL string, body []byte) (*page, error) {
	if k.JSON {
		return openJSON(ctx, pageURL, body, k.Budget)
	}
	doc, err := ParseContext(ctx, pageURL, body)
	if err != nil {
		return nil, err
	}
	return doc.page(ctx, k.Budget), nil
}

// extract runs the kind's link and field rules on the page.
func (p *page) extract(k *Kind) (*Result, error) {
	res := &Result{Found: make([]int, len(k.links))}
	seen := map[string]bool{}
	for _, l := range k.links {
		if err := p.links(l, res, seen); err != nil {
			return nil, err
		}
	}
	if k.Item {
		res.Fields = make(map[string]any, len(k.fields))
		for _, f := range k.fields {
			if err := p.field(f, res); err != nil {
				return nil, err
			}
		}
	}
	res.Work = p.m.used
	return res, nil
}

func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
