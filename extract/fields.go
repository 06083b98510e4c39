package extract

import (
	"regexp"

	"github.com/crawler-dev/crawler/cluster"
)

// fieldRule is a compiled field rule.
type fieldRule struct {
	name     string
	sel      selectorRule
	attr     string
	all      bool
	regex    *regexp.Regexp
	typ      string
	required bool
}

func compileField(name string, f cluster.FieldRule) (*fieldRule, error) {
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
		typ = cluster.TypeString
	}
	return &fieldRule{name: name, sel: sel, attr: f.Attr, all: f.All, regex: re, typ: typ, required: f.Required}, nil
}

// field extracts one field into res.
func (p *page) field(f *fieldRule, res *Result) error {
	vals, err := p.selectValues(f.sel, f.attr)
	if err != nil {
		return err
	}
	if len(vals) == 0 {
		res.Empty = append(res.Empty, f.name)
	}
	vals = f.cut(vals)
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
// the first value it matches is kept.
func (f *fieldRule) cut(vals []value) []value {
	if f.regex == nil {
		return vals
	}
	var out []value
	for _, v := range vals {
		m := f.regex.FindStringSubmatch(v.text)
		if m == nil {
			continue
		}
		cut := m[0]
		if len(m) > 1 {
			cut = m[1]
		}
		out = append(out, value{text: cut})
		if !f.all {
			break
		}
	}
	return out
}

// convertFirst is a field without all: its first value, "" or nil when
// there is none.
func (p *page) convertFirst(f *fieldRule, vals []value, res *Result) any {
	if f.typ == cluster.TypeString {
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
	if f.typ == cluster.TypeString {
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
	if v.num != nil && (f.typ == cluster.TypeNumber || f.typ == cluster.TypeInteger) {
		n := v.num.Float()
		if f.typ == cluster.TypeNumber {
			return n
		}
		if i := v.num.Int(); float64(i) == n {
			return i
		}
		res.FieldErrors = append(res.FieldErrors, FieldError{Field: f.name, Reason: conversionError(f.typ, v.text, errNotInteger)})
		return nil
	}
	out, err := convert(f.typ, v.text, p.base)
	if err != nil {
		res.FieldErrors = append(res.FieldErrors, FieldError{Field: f.name, Reason: conversionError(f.typ, v.text, err)})
		return nil
	}
	return out
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
