package jobspec

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/antchfx/xpath"
)

// Bounds of a job's crawl model.
const (
	MaxKinds        = 100
	MaxLinkRules    = 100
	MaxSitemaps     = 1_000
	MaxPatternBytes = 4 << 10
)

var kindNameRE = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)

// validateModel checks the job's crawl model: the short form, or kinds;
// then the kinds its seeds and sitemaps name.
func (s *Job) validateModel() error {
	if s.ShortForm() {
		if err := s.validateLinks(); err != nil {
			return err
		}
		if err := s.validateFields(); err != nil {
			return err
		}
	} else if err := s.validateKinds(); err != nil {
		return err
	}
	kinds := s.PageKinds()
	if err := s.validateSeedKinds(kinds); err != nil {
		return err
	}
	return validateSitemaps(s.Sitemaps, kinds)
}

// validateKinds checks every kind, in name order so that the same problem
// is reported first every time.
func (s *Job) validateKinds() error {
	switch {
	case s.NextLink != nil || s.DetailLink != nil || len(s.Fields) > 0:
		return errors.New("kinds: next_link, detail_link and fields are the short form of kinds; give one or the other")
	case len(s.Kinds) > MaxKinds:
		return fmt.Errorf("kinds: %d kinds is more than %d", len(s.Kinds), MaxKinds)
	}
	items := 0
	for _, name := range sortedKeys(s.Kinds) {
		if !kindNameRE.MatchString(name) {
			return fmt.Errorf("kinds: %q must be 1-64 characters of [a-z0-9_-]", name)
		}
		k := s.Kinds[name]
		if err := k.validate("kinds."+name, s.Kinds); err != nil {
			return err
		}
		if k.Item {
			items++
		}
	}
	if items == 0 {
		return errors.New("kinds: no kind is an item kind (item: true); the job would store nothing")
	}
	return nil
}

// validate checks one kind; path is where it stands ("kinds.product").
func (k PageKind) validate(path string, kinds map[string]PageKind) error {
	switch k.Format {
	case "", FormatHTML, FormatJSON:
	default:
		return fmt.Errorf("%s.format: %q is not one of html, json", path, k.Format)
	}
	if len(k.Links) > MaxLinkRules {
		return fmt.Errorf("%s.links: %d rules is more than %d", path, len(k.Links), MaxLinkRules)
	}
	for i, l := range k.Links {
		if err := l.validate(fmt.Sprintf("%s.links[%d]", path, i), k.JSONPage(), kinds); err != nil {
			return err
		}
	}
	switch {
	case k.Item && len(k.Fields) == 0:
		return fmt.Errorf("%s.fields: an item kind needs at least one field", path)
	case !k.Item && len(k.Fields) > 0:
		return fmt.Errorf("%s.fields: only item kinds (item: true) have fields", path)
	}
	return validateFieldRules(path+".fields", k.Fields, k.JSONPage())
}

// validate checks one link rule; path is where it stands
// ("kinds.category.links[2]").
func (l LinkRule) validate(path string, jsonPage bool, kinds map[string]PageKind) error {
	sel, err := oneSelector(path, jsonPage, selector{"css", l.CSS}, selector{"xpath", l.XPath}, selector{"json", l.JSON})
	if err != nil {
		return err
	}
	if err := checkSelectorOf(path, sel); err != nil {
		return err
	}
	if l.Attr != "" && sel.key == "json" {
		return fmt.Errorf("%s.attr: a json rule takes the strings at its path; attr is for css and xpath", path)
	}
	if err := checkPattern(path+".allow", l.Allow); err != nil {
		return err
	}
	if err := checkPattern(path+".deny", l.Deny); err != nil {
		return err
	}
	return checkKindRef(path+".kind", l.Kind, kinds)
}

// validateFieldRules checks a map of fields; path is where it stands
// ("fields", "kinds.product.fields").
func validateFieldRules(path string, fields map[string]FieldRule, jsonPage bool) error {
	if len(fields) > MaxFields {
		return fmt.Errorf("%s: %d fields is more than %d", path, len(fields), MaxFields)
	}
	for _, name := range sortedKeys(fields) {
		if name == "" || strings.HasPrefix(name, "$") || strings.ContainsAny(name, ".\x00") {
			return fmt.Errorf("%s: %q is not a usable field name (no '.', no leading '$')", path, name)
		}
		if err := fields[name].validate(path+"."+name, jsonPage); err != nil {
			return err
		}
	}
	return nil
}

// validate checks one field rule; path is where it stands
// ("kinds.product.fields.price").
func (f FieldRule) validate(path string, jsonPage bool) error {
	sel, err := oneSelector(path, jsonPage, selector{"css", f.CSS}, selector{"xpath", f.XPath},
		selector{"json", f.JSON}, selector{"jsonld", f.JSONLD})
	if err != nil {
		return err
	}
	if err := checkSelectorOf(path, sel); err != nil {
		return err
	}
	if f.Attr != "" && (sel.key == "json" || sel.key == "jsonld") {
		return fmt.Errorf("%s.attr: a %s field takes the value at its path; attr is for css and xpath", path, sel.key)
	}
	if f.Type != "" && !slices.Contains(FieldTypes, f.Type) {
		return fmt.Errorf("%s.type: %q is not one of %s", path, f.Type, strings.Join(FieldTypes, ", "))
	}
	if f.Regex == "" {
		return nil
	}
	return checkPattern(path+".regex", f.Regex)
}

// selector is one selector key of a rule and its value.
type selector struct{ key, value string }

// oneSelector returns the one selector a rule gives, refusing none, two,
// and those the page's format cannot answer (css, xpath and jsonld need
// HTML; json needs a JSON page).
func oneSelector(path string, jsonPage bool, sels ...selector) (selector, error) {
	var given []selector
	for _, s := range sels {
		if s.value != "" {
			given = append(given, s)
		}
	}
	keys := make([]string, len(sels))
	for i, s := range sels {
		keys[i] = s.key
	}
	switch {
	case len(given) == 0:
		return selector{}, fmt.Errorf("%s.%s: selector is empty (give exactly one of %s)", path, sels[0].key, strings.Join(keys, ", "))
	case len(given) > 1:
		return selector{}, fmt.Errorf("%s: %s and %s are both given; a rule has exactly one selector", path, given[0].key, given[1].key)
	case jsonPage && given[0].key != "json":
		return selector{}, fmt.Errorf("%s.%s: the kind's pages are JSON (format: json); use a json path", path, given[0].key)
	case !jsonPage && given[0].key == "json":
		return selector{}, fmt.Errorf("%s.json: the kind's pages are HTML; json paths need format: json", path)
	}
	return given[0], nil
}

// checkSelectorOf compiles a css or xpath selector the way extraction
// will; json and jsonld paths are gjson paths, which have no syntax
// errors, only paths that resolve to nothing, and modifiers a page could
// make cost more than the page (CheckJSONPath).
func checkSelectorOf(path string, sel selector) error {
	switch sel.key {
	case "json", "jsonld":
		if err := CheckJSONPath(sel.value); err != nil {
			return fmt.Errorf("%s.%s: %w", path, sel.key, err)
		}
	case "css":
		if err := checkSelector(sel.value); err != nil {
			return fmt.Errorf("%s.css: %w", path, err)
		}
	case "xpath":
		if _, err := xpath.Compile(sel.value); err != nil {
			return fmt.Errorf("%s.xpath: %q is not a valid XPath expression: %v", path, sel.value, err)
		}
	}
	return nil
}

// checkPattern compiles a regular expression (Go's RE2 syntax, linear in
// the text it reads).
func checkPattern(path, pattern string) error {
	if pattern == "" {
		return nil
	}
	if len(pattern) > MaxPatternBytes {
		return fmt.Errorf("%s: a pattern of %d bytes is longer than %d", path, len(pattern), MaxPatternBytes)
	}
	if _, err := regexp.Compile(pattern); err != nil {
		return fmt.Errorf("%s: %q is not a valid regular expression: %v", path, pattern, err)
	}
	return nil
}

// checkKindRef refuses a kind that is not defined.
func checkKindRef(path, kind string, kinds map[string]PageKind) error {
	if kind == "" {
		return fmt.Errorf("%s: the kind the links lead to is required", path)
	}
	if _, ok := kinds[kind]; !ok {
		return fmt.Errorf("%s: %q is not a kind of this job (kinds: %s)", path, kind, strings.Join(sortedKeys(kinds), ", "))
	}
	return nil
}

// validateSeedKinds checks that every seed's kind is defined: start, for
// the seeds given without one.
func (s *Job) validateSeedKinds(kinds map[string]PageKind) error {
	for i, seed := range s.Seeds {
		kind, given := s.SeedKinds[seed]
		if !given {
			kind = KindStart
		}
		if _, ok := kinds[kind]; ok {
			continue
		}
		if given {
			return fmt.Errorf("seeds[%d].kind: %q is not a kind of this job (kinds: %s)", i, kind, strings.Join(sortedKeys(kinds), ", "))
		}
		return fmt.Errorf("seeds[%d]: a seed without a kind is of kind start, and kinds has no start; write {url: %s, kind: KIND}", i, seed)
	}
	return nil
}

// validateSitemaps checks the sitemaps entries.
func validateSitemaps(rules []SitemapRule, kinds map[string]PageKind) error {
	if len(rules) > MaxSitemaps {
		return fmt.Errorf("sitemaps: %d entries is more than %d", len(rules), MaxSitemaps)
	}
	for i, r := range rules {
		path := fmt.Sprintf("sitemaps[%d]", i)
		if r.URL == "" {
			return fmt.Errorf("%s.url: a sitemap URL, or robots, is required", path)
		}
		if r.URL != SitemapsFromRobots {
			if err := checkHTTPURL(r.URL); err != nil {
				return fmt.Errorf("%s.url: %w", path, err)
			}
		}
		if err := checkPattern(path+".allow", r.Allow); err != nil {
			return err
		}
		if err := checkPattern(path+".deny", r.Deny); err != nil {
			return err
		}
		if err := checkKindRef(path+".kind", r.Kind, kinds); err != nil {
			return err
		}
	}
	return nil
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
