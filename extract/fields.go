package extract

import (
	"net/url"
	"strings"

	"github.com/crawler-dev/crawler/jobspec"
)

// fieldRule is a compiled field rule.
type fieldRule struct {
	name     string
	sel      selectorRule
	attr     string
	all      bool
	regex    *pattern
	typ      string
	required bool
}

func compileField(name string, f jobspec.FieldRule) (*fieldRule, error) {
	sel, err := compileSelector(f.CSS, f.XPath, f.JSON, f.JSONLD)
	if err != nil {
		return nil, err
	}
	re, err := compilePattern("regex", f.Regex)
	if err != nil {
		return nil, err
	}
	typ := f.Type
	if typ == "" {
		typ = jobspec.TypeString
	}
	return &fieldRule{name: name, sel: sel, attr: f.Attr, all: f.All, regex: re, typ: typ, required: f.Required}, nil
}

// field extracts one field into res.
func (p *page) field(f *fieldRule, res *Result) error {
	vals, err := p.selectValues(f.sel, f.attr)
	if err != nil {
		return err
	}
	if blank(vals) { // it selected nothing, or only elements without text
		res.Empty = append(res.Empty, f.name)
	}
	if vals, err = p.cut(f, vals); err != nil {
		return err
	}
	var v any
	if f.all {
		v = p.convertAll(f, vals, res)
	} else {
		v = p.convertFirst(f, vals, res)
	}
	res.Fields[f.name] = v
	if f.required && missing(v) {
		res.Missing = append(res.Missing, f.name)
	}
	return nil
}

// cut applies the field's regex to each value: its first group, or the
// whole match; a value it does not match is dropped. Without all, only
// the first value it matches is kept. Each run is charged to the page.
func (p *page) cut(f *fieldRule, vals []value) ([]value, error) {
	if f.regex == nil {
		return vals, nil
	}
	var out []value
	for _, v := range vals {
		cut, ok, err := p.submatch(f.regex, v.text)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		out = append(out, value{text: cut})
		if !f.all {
			break
		}
	}
	return out, nil
}

// convertFirst is a field without all: its first value, "" or nil when
// there is none.
func (p *page) convertFirst(f *fieldRule, vals []value, res *Result) any {
	if f.typ == jobspec.TypeString {
		if len(vals) == 0 {
			return ""
		}
		return vals[0].text
	}
	if len(vals) == 0 || vals[0].text == "" {
		return nil
	}
	return p.convertOne(f, vals[0], res)
}

// convertAll is a field with all: every non-empty value, converted.
func (p *page) convertAll(f *fieldRule, vals []value, res *Result) any {
	if f.typ == jobspec.TypeString {
		out := []string{}
		for _, v := range vals {
			if v.text != "" {
				out = append(out, v.text)
			}
		}
		return out
	}
	out := []any{}
	for _, v := range vals {
		if v.text != "" {
			out = append(out, p.convertOne(f, v, res))
		}
	}
	return out
}

// convertOne converts one value, recording a value that does not convert
// (nil) in res. A JSON number is read as a number.
func (p *page) convertOne(f *fieldRule, v value, res *Result) any {
	out, err := convertValue(f.typ, v, p.base)
	if err != nil {
		res.FieldErrors = append(res.FieldErrors, FieldError{Field: f.name, Reason: conversionError(f.typ, v.text, err)})
		return nil
	}
	return out
}

// convertValue converts one value to a type; a JSON number is read with
// JSON's syntax, not as text (where "1.000" groups thousands).
func convertValue(typ string, v value, base *url.URL) (any, error) {
	switch {
	case v.num && typ == jobspec.TypeNumber:
		return jsonNumber(v.text)
	case v.num && typ == jobspec.TypeInteger:
		return jsonInteger(v.text)
	}
	return convert(typ, v.text, base)
}

// blank reports whether vals hold no text at all.
func blank(vals []value) bool {
	for _, v := range vals {
		if strings.TrimSpace(v.text) != "" {
			return false
		}
	}
	return true
}

// missing reports whether a field's value counts as absent for required.
func missing(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case []string:
		return len(v) == 0
	case []any:
		return len(v) == 0
	}
	return false
}
