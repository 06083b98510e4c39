package extract

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/crawler-dev/crawler/jobspec"
)

// errNoNumber and the like say why a value did not convert.
var (
	errNoNumber   = errors.New("no number in it")
	errNotInteger = errors.New("not a whole number")
	errNoDate     = errors.New("not a date in a known format")
	errNoBool     = errors.New("not true/false, yes/no, on/off or 1/0")
	errNoURL      = errors.New("not an http(s) URL")
	errHex        = errors.New("a hexadecimal number, which is not read")
	errOutOfRange = errors.New("out of range")
)

// convert converts one selected value to the field's type; base resolves
// url values.
func convert(typ, s string, base *url.URL) (any, error) {
	switch typ {
	case jobspec.TypeNumber:
		return ParseNumber(s)
	case jobspec.TypeInteger:
		return ParseInteger(s)
	case jobspec.TypeDate:
		return ParseDate(s)
	case jobspec.TypeBool:
		return ParseBool(s)
	case jobspec.TypeURL:
		return resolveURL(base, s)
	}
	return s, nil
}

// groupSpaces may group thousands, never mark decimals: spaces, no-break
// spaces, thin spaces and apostrophes ("1 299,50", "1'299.50").
const groupSpaces = " \u00a0\u202f\u2009'’"

// ParseNumber reads the first number in s as prices and counts are
// written: "$1,299.00", "1.299,00 €", "1 299,50 zł", "¥12,000", "USD 12.5",
// "-3.5%", "1.5e3". Of '.' and ',', the last is the decimal separator when
// both appear, or when it is followed by other than three digits (or
// comes after a lone 0); otherwise they group thousands. Spaces and
// apostrophes only group. An exponent ("e18", "E-3") right after the
// digits scales the number; a hexadecimal number ("0x1F") is not read, nor
// one too large for a float64.
func ParseNumber(s string) (float64, error) {
	d, err := readDecimal(s)
	if err != nil {
		return 0, err
	}
	return d.float()
}

// readDecimal reads the first number in s (see ParseNumber).
func readDecimal(s string) (decimal, error) {
	start := strings.IndexFunc(s, func(r rune) bool { return '0' <= r && r <= '9' })
	if start < 0 {
		return decimal{}, errNoNumber
	}
	if hexPrefix(s[start:]) {
		return decimal{}, errHex
	}
	groups, seps, end := numberGroups(s[start:])
	d := decimalOf(groups, seps)
	d.neg = negative(s[:start])
	exp, ok := exponent(s[start+end:])
	if !ok {
		return decimal{}, errOutOfRange
	}
	d.exp = exp
	return d, nil
}

// hexPrefix reports a number written as 0x followed by a hex digit.
func hexPrefix(s string) bool {
	return len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && isHexDigit(s[2])
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// negative reports whether the text before a number ends in a minus sign,
// perhaps followed by a currency sign or code and spaces ("-$5", "− 5",
// "USD -5").
func negative(before string) bool {
	t := strings.TrimRightFunc(before, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.Is(unicode.Sc, r) || unicode.IsUpper(r)
	})
	minus, size := utf8.DecodeLastRuneInString(t)
	if minus != '-' && minus != '−' {
		return false
	}
	// "SKU-12" is a code, not minus twelve: a sign stands alone.
	prev, _ := utf8.DecodeLastRuneInString(t[:len(t)-size])
	return prev == utf8.RuneError || !unicode.IsLetter(prev) && !unicode.IsDigit(prev)
}

// numberGroups splits the number at the start of s into its runs of
// digits and the single separators between them, and says where it ends.
// A grouping space must be followed by exactly three digits, so "2 3" is
// two numbers.
func numberGroups(s string) (groups []string, seps []rune, end int) {
	i := 0
	for {
		j := i
		for j < len(s) && '0' <= s[j] && s[j] <= '9' {
			j++
		}
		groups = append(groups, s[i:j])
		if j == len(s) {
			return groups, seps, j
		}
		sep, size := utf8.DecodeRuneInString(s[j:])
		k := j + size
		n := 0
		for k+n < len(s) && '0' <= s[k+n] && s[k+n] <= '9' {
			n++
		}
		spaced := strings.ContainsRune(groupSpaces, sep)
		if n == 0 || (sep != '.' && sep != ',' && !spaced) || (spaced && n != 3) {
			return groups, seps, j
		}
		seps = append(seps, sep)
		i = k
	}
}

// decimalOf joins the groups into a decimal, its point where the decimal
// separator is.
func decimalOf(groups []string, seps []rune) decimal {
	dec := -1 // the separator that marks the decimals
	last := -1
	kinds := map[rune]bool{}
	for i, sep := range seps {
		if sep == '.' || sep == ',' {
			kinds[sep] = true
			last = i
		}
	}
	switch {
	case last < 0:
	case len(kinds) == 2:
		dec = last
	case countRune(seps, seps[last]) > 1:
		// "1,000,000": only groups.
	case len(groups[last+1]) != 3 || groups[last] == "0":
		dec = last
	}
	var d decimal
	d.digits = strings.Join(groups, "")
	d.point = len(d.digits)
	if dec >= 0 {
		d.point = len(strings.Join(groups[:dec+1], ""))
	}
	return d
}

func countRune(rs []rune, r rune) int {
	n := 0
	for _, x := range rs {
		if x == r {
			n++
		}
	}
	return n
}

// ParseInteger reads a number as ParseNumber does and needs it whole and
// within int64, read exactly ("1e18" is 10^18, "1.5e3" 1500).
func ParseInteger(s string) (int64, error) {
	d, err := readDecimal(s)
	if err != nil {
		return 0, err
	}
	return d.integer()
}

// dateLayouts are the formats ParseDate reads, tried in order. A layout
// without a zone reads the time as UTC.
var dateLayouts = []string{
	time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02T15:04:05.999999999", "2006-01-02T15:04Z07:00",
	"2006-01-02T15:04", "2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05 Z07:00", "2006-01-02 15:04:05.999999999",
	"2006-01-02 15:04", "2006-01-02 15:04:05 MST", "2006-01-02",
	time.RFC1123, time.RFC1123Z, time.RFC850, time.ANSIC, time.UnixDate, time.RFC822, time.RFC822Z,
	"Mon, 2 Jan 2006 15:04:05 MST", "Mon, 2 Jan 2006 15:04:05 -0700", "2 Jan 2006 15:04:05 -0700",
	"Jan 2, 2006", "January 2, 2006", "Jan 2 2006", "January 2 2006", "Mon, Jan 2, 2006", "Monday, January 2, 2006",
	"Jan 2, 2006 3:04 PM", "January 2, 2006 3:04 PM", "Jan 2, 2006 15:04",
	"2 Jan 2006", "2 January 2006", "02-Jan-2006", "2-Jan-2006", "Mon, 2 Jan 2006", "Monday, 2 January 2006",
	"2 January 2006 15:04", "2006/01/02", "2006/1/2", "2006/01/02 15:04:05", "2006/01/02 15:04", "2006.01.02", "2006.1.2",
	"02.01.2006", "2.1.2006", "02.01.2006 15:04", "02.01.2006 15:04:05",
	"2006年1月2日", "2006年01月02日", "2006年1月2日 15:04", "2006年1月2日 15:04:05",
}

// ordinalRE finds the suffix of a day written as an ordinal: 1st, 2nd, 23rd.
var ordinalRE = regexp.MustCompile(`\b(\d{1,2})(st|nd|rd|th)\b`)

// ParseDate reads a date (see dateLayouts; Unix time as 9 to 11 digits of
// seconds or 12 to 14 of milliseconds) and writes it as RFC 3339 in UTC;
// a date alone is midnight UTC.
func ParseDate(s string) (string, error) {
	s = CollapseSpace(s)
	if t, ok := unixTime(s); ok {
		return t.UTC().Format(time.RFC3339), nil
	}
	s = ordinalRE.ReplaceAllString(s, "$1")
	for _, layout := range dateLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC().Format(time.RFC3339Nano), nil
		}
	}
	return "", errNoDate
}

// unixTime reads seconds (9 to 11 digits) or milliseconds (12 to 14).
func unixTime(s string) (time.Time, bool) {
	if len(s) < 9 || len(s) > 14 || strings.Trim(s, "0123456789") != "" {
		return time.Time{}, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	if len(s) <= 11 {
		return time.Unix(n, 0), true
	}
	return time.UnixMilli(n), true
}

// ParseBool reads true/false, yes/no, y/n, on/off and 1/0, without regard
// to case.
func ParseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "yes", "y", "on", "1":
		return true, nil
	case "false", "no", "n", "off", "0":
		return false, nil
	}
	return false, errNoBool
}

// resolveURL resolves s against the page's base; the result must be an
// http(s) URL.
func resolveURL(base *url.URL, s string) (string, error) {
	u, err := base.Parse(strings.TrimSpace(s))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errNoURL
	}
	return u.String(), nil
}

// formatFloat writes a number without a needless fraction: 3, 2.5.
func formatFloat(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// conversionError says which value of a field did not convert, and why.
func conversionError(typ, value string, err error) string {
	if len(value) > 80 {
		value = value[:80] + "…"
	}
	return fmt.Sprintf("%q is not a %s: %v", value, typ, err)
}
