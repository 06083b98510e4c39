package connurl

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/crawler-dev/crawler/internal/redact"
)

// ErrInvalid matches (errors.Is) every error of a URL that does not
// parse; its text is not repeated in theirs.
var ErrInvalid = errors.New("invalid URL")

// invalidError is the error of a URL that does not parse: its message is
// the redacted URL and what is wrong with it.
type invalidError string

func (e invalidError) Error() string        { return string(e) }
func (e invalidError) Is(target error) bool { return target == ErrInvalid }

// errUserinfoAt is checkUserinfo's refusal.
var errUserinfoAt = errors.New("an @ past the host's start")

// checkUserinfo refuses a URL whose last "@" lies past the end of its
// authority: a user name or password holding an unescaped / ? or #, which
// URL parsers cut in the wrong place (taking part of the password for the
// host, or its end for the path).
func checkUserinfo(raw string) error {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return nil
	}
	end := strings.IndexAny(rest, "/?#")
	if at := strings.LastIndex(rest, "@"); end >= 0 && at > end {
		return errUserinfoAt
	}
	return nil
}

// invalid is the error of raw, which parse refused with err, saying why
// without quoting any part of its user name or password: parse is run
// again on raw with its userinfo replaced, and when that copy parses, the
// userinfo was the trouble. The message is "<redacted URL>: <why>".
func invalid(raw string, err error, parse func(string) error) error {
	shown := redact.URL(raw)
	scheme, rest, ok := strings.Cut(raw, "://")
	at := strings.LastIndex(rest, "@")
	if ok && at >= 0 {
		err = parse(scheme + "://" + redact.Mask + ":" + redact.Mask + "@" + rest[at+1:])
		if err == nil {
			return invalidError(shown + ": the user name or password holds a character that must be percent-encoded " +
				"(/ as %2F, # as %23, ? as %3F, @ as %40, % as %25)")
		}
	}
	// A driver may quote the URL it failed on, or a secret of its query.
	return invalidError(shown + ": " + redact.Text(err.Error(), raw))
}

// CheckMongo refuses a MongoDB URI that is not mongodb:// or
// mongodb+srv://, or does not parse as a URL, so that neither the driver
// nor a log ever quotes one that does not.
func CheckMongo(uri string) error {
	if !strings.HasPrefix(uri, "mongodb://") && !strings.HasPrefix(uri, "mongodb+srv://") {
		return invalidError(fmt.Sprintf("%q is not a mongodb:// URI", redact.URL(uri)))
	}
	if err := parseMongo(uri); err != nil {
		return invalid(uri, err, parseMongo)
	}
	return nil
}

func parseMongo(uri string) error {
	if err := checkUserinfo(uri); err != nil {
		return err
	}
	_, err := url.Parse(uri)
	return err
}
