package extract

import (
	"errors"

	"github.com/tidwall/gjson"
)

// pathCost is how many passes over a document a gjson path may take:
// one, plus one for each list it maps over ('#'), each modifier ('@'),
// each pipe ('|', which reads a result again) and each further path of a
// multipath (','). The passes are charged before the path runs.
func pathCost(path string) int64 {
	n := 1
	for i := 0; i < len(path); i++ {
		switch path[i] {
		case '#', '@', '|', ',':
			n++
		}
	}
	return int64(n)
}

// docCost is the charge for reading a document of n bytes once: the
// units of a JSON page's budget (one an element, an element every 16
// bytes).
func docCost(n int) int64 { return int64(n)/16 + 1 }

// jsonPathValues returns the values at a gjson path of a JSON document,
// charged to the page's meter: a list at the path gives its elements (so
// "items.#.url" gives each item's url, and lists within lists their
// elements), anything else itself; nothing when the path resolves to
// nothing or to null.
func (p *page) jsonPathValues(doc string, path string) ([]value, error) {
	if !p.m.charge(docCost(len(doc)) * pathCost(path)) {
		return nil, p.m.err
	}
	return p.values(gjson.Get(doc, path))
}

// values are a gjson result's values (see jsonPathValues), read in one
// pass whatever the nesting.
func (p *page) values(r gjson.Result) ([]value, error) {
	if !r.Exists() || r.Type == gjson.Null {
		return nil, nil
	}
	if !r.IsArray() {
		return []value{jsonValue(r)}, nil
	}
	var out []value
	err := listValues(r.Raw, p.m, func(raw string) {
		if v := gjson.Parse(raw); v.Type != gjson.Null {
			out = append(out, jsonValue(v))
		}
	})
	if errors.Is(err, errStopped) {
		return nil, p.m.err
	}
	return out, err
}

// jsonValue is a JSON value as a field's value: a string as itself, a
// number, boolean, object or list as its JSON.
func jsonValue(r gjson.Result) value {
	if r.Type == gjson.String {
		return value{text: r.Str}
	}
	return value{text: r.Raw, num: r.Type == gjson.Number}
}
