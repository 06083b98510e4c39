package sink

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/internal/redact"
)

// Spec is a parsed --sink URI.
type Spec struct {
	// Scheme names the kind of sink ("postgres").
	Scheme string
	// URL is the URI parsed.
	URL *url.URL
	raw string
}

// String is the URI with its credentials hidden: what logs, errors,
// metrics and summaries show.
func (s Spec) String() string { return redact.URL(s.raw) }

// scheme is a kind of sink: check says what is wrong with a URI of it
// (its options) without connecting; open connects.
type scheme struct {
	check func(s Spec) error
	open  func(ctx context.Context, s Spec, log *zap.Logger) (Sink, error)
}

// schemes maps each URI scheme to its sink; aliases share one.
var schemes = map[string]scheme{
	"postgres":   {checkPostgres, openPostgres},
	"postgresql": {checkPostgres, openPostgres},
	"warc":       {checkWARC, openWARC},
	"kafka":      {checkKafka, openKafka},
	"s3":         {checkS3, openS3},
}

// opaqueSchemes are written SCHEME:VALUE, without "//".
var opaqueSchemes = map[string]bool{"warc": true}

// Schemes lists the URI schemes Parse accepts, sorted, as written in a
// URI ("postgres://", "warc:").
func Schemes() []string {
	out := make([]string, 0, len(schemes))
	for s := range schemes {
		if opaqueSchemes[s] {
			out = append(out, s+":")
			continue
		}
		out = append(out, s+"://")
	}
	sort.Strings(out)
	return out
}

// Parse reads a --sink URI. The error names what is wrong: no scheme, a
// scheme no sink has, a URI that does not parse; never the credentials.
func Parse(raw string) (Spec, error) {
	shown := redact.URL(raw)
	if strings.TrimSpace(raw) == "" {
		return Spec{}, fmt.Errorf("--sink: empty URI; give one of %s", strings.Join(Schemes(), ", "))
	}
	scheme, _, ok := strings.Cut(raw, ":")
	if !ok || scheme == "" || strings.ContainsAny(scheme, "/.\\ ") {
		return Spec{}, fmt.Errorf("--sink %q: no scheme; give one of %s", shown, strings.Join(Schemes(), ", "))
	}
	scheme = strings.ToLower(scheme)
	if _, known := schemes[scheme]; !known {
		return Spec{}, fmt.Errorf("--sink %q: unknown scheme %q; known: %s", shown, scheme, strings.Join(Schemes(), ", "))
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Spec{}, fmt.Errorf("--sink %q: malformed URI: %s", shown, redact.Text(unwrapURLError(err), raw))
	}
	spec := Spec{Scheme: canonicalScheme(scheme), URL: u, raw: raw}
	if err := schemes[scheme].check(spec); err != nil {
		return Spec{}, fmt.Errorf("--sink %s: %w", spec, err)
	}
	return spec, nil
}

// canonicalScheme folds a scheme's aliases into one name.
func canonicalScheme(s string) string {
	if s == "postgresql" {
		return "postgres"
	}
	return s
}

// unwrapURLError is url.Parse's reason without the URI it quotes.
func unwrapURLError(err error) string {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err.Error()
	}
	return err.Error()
}

// Open parses raw and connects to its sink. Errors name the sink by its
// redacted URI; a sink hides the URI's secrets in what its driver says.
func Open(ctx context.Context, raw string, log *zap.Logger) (Sink, Spec, error) {
	s, err := Parse(raw)
	if err != nil {
		return nil, Spec{}, err
	}
	if log == nil {
		log = zap.NewNop()
	}
	sk, err := schemes[strings.ToLower(s.URL.Scheme)].open(ctx, s, log.With(zap.Stringer("sink", s)))
	if err != nil {
		return nil, Spec{}, fmt.Errorf("--sink %s: %w", s, err)
	}
	return sk, s, nil
}

// redactedError is an error whose text has a URI's credentials hidden;
// errors.Is and errors.As still see its cause.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redacted hides raw's credentials in err's text.
func redacted(err error, raw string) error {
	if err == nil {
		return nil
	}
	return &redactedError{msg: redact.Text(err.Error(), raw), err: err}
}
