package redact

import (
	"net/url"
	"sort"
	"strings"
)

// Mask is what stands for a hidden secret.
const Mask = "xxxxx"

// URL returns raw with its password and its secret query values replaced
// by Mask. It never returns a password in any form: when raw does not
// parse, or parses in a way that leaves an "@" outside its userinfo (a
// password holding an unescaped / # or ?), everything between "://" (or
// the start, without one) and the last "@" is replaced.
func URL(raw string) string {
	return redactQuery(redactUserinfo(raw))
}

func redactUserinfo(raw string) string {
	scheme, rest, hasScheme := strings.Cut(raw, "://")
	if !hasScheme {
		scheme, rest = "", raw
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return raw // no userinfo
	}
	if u, err := url.Parse(raw); err == nil && hasScheme && u.User != nil && at < strings.IndexAny(rest+"/", "/?#") {
		if _, has := u.User.Password(); has {
			return scheme + "://" + u.User.Username() + ":" + Mask + "@" + rest[at+1:]
		}
		return raw
	}
	if !hasScheme {
		return Mask + "@" + rest[at+1:]
	}
	return scheme + "://" + Mask + "@" + rest[at+1:]
}

// redactQuery replaces the values of raw's secret query options, leaving
// the rest of raw as written.
func redactQuery(raw string) string {
	head, query, ok := strings.Cut(raw, "?")
	if !ok {
		return raw
	}
	query, fragment, hasFragment := strings.Cut(query, "#")
	pairs := strings.Split(query, "&")
	for i, p := range pairs {
		if k, _, ok := strings.Cut(p, "="); ok && secretOption(k) {
			pairs[i] = k + "=" + Mask
		}
	}
	out := head + "?" + strings.Join(pairs, "&")
	if hasFragment {
		out += "#" + fragment
	}
	return out
}

// secretWords are the parts of a query option's name that mark its value
// as a credential.
var secretWords = []string{"pass", "pwd", "token", "secret", "key", "sig", "credential", "auth"}

// publicOptions are options whose names hold a secret word but whose
// values are not secrets, and help to read a URI.
var publicOptions = map[string]bool{"authsource": true, "authmechanism": true}

// secretOption reports whether a query option's value is a credential.
func secretOption(name string) bool {
	if dec, err := url.QueryUnescape(name); err == nil {
		name = dec
	}
	name = strings.ToLower(name)
	if publicOptions[name] {
		return false
	}
	for _, w := range secretWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// Text returns msg with every secret of the given URLs replaced by Mask,
// as written and unescaped: drivers quote the URL they failed on, or one
// of its secrets alone.
func Text(msg string, raws ...string) string {
	var secrets []string
	for _, raw := range raws {
		secrets = append(secrets, Secrets(raw)...)
	}
	sort.Slice(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
	for _, s := range secrets {
		msg = strings.ReplaceAll(msg, s, Mask)
	}
	return msg
}

// Secrets lists raw's credentials: its userinfo and password, and the
// values of its secret query options with their parts (a MongoDB
// authMechanismProperties=AWS_SESSION_TOKEN:tok gives tok too), each as
// written and unescaped. Empty strings are left out.
func Secrets(raw string) []string {
	var out []string
	add := func(s string) {
		if s == "" {
			return
		}
		out = append(out, s)
		if dec, err := url.PathUnescape(s); err == nil && dec != s {
			out = append(out, dec)
		}
		if dec, err := url.QueryUnescape(s); err == nil && dec != s {
			out = append(out, dec)
		}
	}
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		rest = raw
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		userinfo := rest[:at]
		_, password, _ := strings.Cut(userinfo, ":")
		add(userinfo)
		add(password)
	}
	for _, v := range secretValues(raw) {
		add(v)
		for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ':' }) {
			if len(part) >= 4 { // not "AWS" or "1": too common to replace
				add(part)
			}
		}
	}
	return out
}

// secretValues are the values of raw's secret query options, as written.
func secretValues(raw string) []string {
	_, query, ok := strings.Cut(raw, "?")
	if !ok {
		return nil
	}
	query, _, _ = strings.Cut(query, "#")
	var out []string
	for p := range strings.SplitSeq(query, "&") {
		if k, v, ok := strings.Cut(p, "="); ok && secretOption(k) {
			out = append(out, v)
		}
	}
	return out
}
