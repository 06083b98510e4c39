package jobspec

import (
	"fmt"
	"sort"

	"gopkg.in/yaml.v3"
)

// The kinds the short form of a job (next_link, detail_link, fields) means,
// and the kind of a seed given without one.
const (
	KindStart  = "start"
	KindDetail = "detail"
)

// Page formats: how a kind's pages are read.
const (
	FormatHTML = "html"
	FormatJSON = "json"
)

// Field types: what a field's value is converted to.
const (
	TypeString  = "string"
	TypeNumber  = "number"
	TypeInteger = "integer"
	TypeDate    = "date"
	TypeBool    = "bool"
	TypeURL     = "url"
)

// FieldTypes lists the values a field's type may take, the default first.
var FieldTypes = []string{TypeString, TypeNumber, TypeInteger, TypeDate, TypeBool, TypeURL}

// SitemapsFromRobots is the sitemap URL that means the Sitemap: lines of
// each seed host's robots.txt.
const SitemapsFromRobots = "robots"

// PageKind is one kind of page of a job: how its pages are read (Format),
// which links they hold and to which kinds those lead, and, for an item
// kind, the fields of the item each page becomes.
type PageKind struct {
	// Format is html (the default) or json.
	Format string `yaml:"format" json:"format,omitempty"`
	// Item makes each page of this kind an item, routed to the slaves.
	Item bool `yaml:"item" json:"item,omitempty"`
	// Links are followed from every page of this kind, item pages too.
	Links []LinkRule `yaml:"links" json:"links,omitempty"`
	// Fields are extracted from each page of an item kind.
	Fields map[string]FieldRule `yaml:"fields" json:"fields,omitempty"`
	// Priority orders the kind's pages against the job's others (higher
	// first); nil means the default (KindPriority).
	Priority *int `yaml:"priority" json:"priority,omitempty"`
	// RenderSpec renders the kind's pages in a headless browser; what it
	// leaves unset comes from the job's.
	RenderSpec `yaml:",inline"`
}

// JSONPage reports whether the kind's pages are JSON.
func (k PageKind) JSONPage() bool { return k.Format == FormatJSON }

// Seed is one seed as a job file may give it: a URL, or {url, kind}.
type Seed struct {
	URL  string `yaml:"url" json:"url"`
	Kind string `yaml:"kind" json:"kind,omitempty"`
}

// UnmarshalYAML reads a seed written as a URL or as {url, kind}; any other
// key is an error naming it.
func (s *Seed) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*s = Seed{URL: n.Value}
		return nil
	case yaml.MappingNode:
		var out Seed
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i], n.Content[i+1]
			if val.Kind != yaml.ScalarNode {
				return &nodeError{line: val.Line, column: val.Column, err: fmt.Errorf("seeds: %s must be a string", key.Value)}
			}
			switch key.Value {
			case "url":
				out.URL = val.Value
			case "kind":
				out.Kind = val.Value
			default:
				return &nodeError{line: key.Line, column: key.Column,
					err: fmt.Errorf("seeds: %q is not a key of a seed (url, kind)", key.Value)}
			}
		}
		*s = out
		return nil
	}
	return &nodeError{line: n.Line, column: n.Column, err: fmt.Errorf("seeds: a seed is a URL or {url, kind}")}
}

// SitemapRule is one sitemaps entry: a sitemap (or sitemap index), or
// "robots" for the Sitemap: lines of each seed host's robots.txt, whose
// page URLs become pages of Kind. Allow and Deny filter the page URLs by
// regular expression, never the child sitemaps of an index.
type SitemapRule struct {
	URL   string `yaml:"url" json:"url"`
	Kind  string `yaml:"kind" json:"kind"`
	Allow string `yaml:"allow" json:"allow,omitempty"`
	Deny  string `yaml:"deny" json:"deny,omitempty"`
}

// takeSeedList moves the seeds read from a job file into Seeds and
// SeedKinds.
func (s *Job) takeSeedList() {
	if s.SeedList == nil {
		return
	}
	s.Seeds = make([]string, 0, len(s.SeedList))
	for _, seed := range s.SeedList {
		s.Seeds = append(s.Seeds, seed.URL)
		if seed.Kind != "" {
			if s.SeedKinds == nil {
				s.SeedKinds = map[string]string{}
			}
			s.SeedKinds[seed.URL] = seed.Kind
		}
	}
	s.SeedList = nil
}

// SeedKind is the kind of the seed url: the one it was given with, else
// start.
func (s *Job) SeedKind(url string) string {
	if k, ok := s.SeedKinds[url]; ok {
		return k
	}
	return KindStart
}

// ShortForm reports whether the job is written in the short form
// (next_link, detail_link, fields) rather than with kinds.
func (s *Job) ShortForm() bool { return len(s.Kinds) == 0 }

// PageKinds returns the job's page kinds: Kinds as given, or what the
// short form means, exactly
//
//	kinds: {start: {links: [next_link → start, detail_link → detail]},
//	        detail: {item: true, fields}}
//
// (without next_link, start has the detail link alone). The master, the
// slaves and crawler check all work on this one model.
func (s *Job) PageKinds() map[string]PageKind {
	if !s.ShortForm() {
		return s.Kinds
	}
	var links []LinkRule
	if s.NextLink != nil {
		next := *s.NextLink
		next.Kind = KindStart
		links = append(links, next)
	}
	if s.DetailLink != nil {
		detail := *s.DetailLink
		detail.Kind = KindDetail
		links = append(links, detail)
	}
	return map[string]PageKind{
		KindStart:  {Links: links},
		KindDetail: {Item: true, Fields: s.Fields},
	}
}

// ItemKindNames are the names of the job's item kinds, sorted.
func (s *Job) ItemKindNames() []string {
	var out []string
	for name, k := range s.PageKinds() {
		if k.Item {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}
