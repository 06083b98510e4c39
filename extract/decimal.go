package extract

import (
	"math"
	"strconv"
	"strings"
)

// decimal is a number as written: the digits, a decimal point after the
// first point of them, times ten to the exp.
type decimal struct {
	neg    bool
	digits string // "129950" for 1299.50
	point  int    // 4 for 1299.50
	exp    int
}

// maxExponent bounds the exponent read: past it a float64 is 0 or
// infinite and an integer out of range.
const maxExponent = 100_000

// exponent reads an exponent at the start of s ("e18", "E-3", "e+2"), 0
// when there is none; false when it is too large to mean a number.
func exponent(s string) (int, bool) {
	if len(s) < 2 || (s[0] != 'e' && s[0] != 'E') {
		return 0, true
	}
	i := 1
	if s[i] == '+' || s[i] == '-' {
		i++
	}
	j := i
	for j < len(s) && '0' <= s[j] && s[j] <= '9' {
		j++
	}
	if j == i {
		return 0, true // "5 EUR", "3em": not an exponent
	}
	exp, err := strconv.Atoi(s[i:j])
	if err != nil || exp > maxExponent {
		return 0, false
	}
	if s[1] == '-' {
		exp = -exp
	}
	return exp, true
}

// float is the decimal as a float64; out of range past ±MaxFloat64.
func (d decimal) float() (float64, error) {
	text := "0" + d.digits[:d.point]
	if d.point < len(d.digits) {
		text += "." + d.digits[d.point:]
	}
	v, err := strconv.ParseFloat(text+"e"+strconv.Itoa(d.exp), 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, errOutOfRange
	}
	if d.neg && v != 0 {
		v = -v
	}
	return v, nil
}

// maxIntDigits is the most digits an int64 has.
const maxIntDigits = 19

// integer is the decimal as an int64, read exactly: not a whole number
// when a digit after the point is not 0, out of range past int64.
func (d decimal) integer() (int64, error) {
	point := d.point + d.exp
	whole, frac := d.digits, ""
	switch {
	case point <= 0:
		whole, frac = "", d.digits
	case point < len(d.digits):
		whole, frac = d.digits[:point], d.digits[point:]
	}
	if strings.Trim(frac, "0") != "" {
		return 0, errNotInteger
	}
	whole = strings.TrimLeft(whole, "0")
	zeros := max(point-len(d.digits), 0)
	if whole == "" {
		return 0, nil
	}
	if len(whole)+zeros > maxIntDigits {
		return 0, errOutOfRange
	}
	text := whole + strings.Repeat("0", zeros)
	if d.neg {
		text = "-" + text
	}
	v, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return 0, errOutOfRange
	}
	return v, nil
}

// jsonDecimal reads a JSON number ("-12.5e3"), which gjson has validated.
func jsonDecimal(raw string) (decimal, error) {
	var d decimal
	raw, d.neg = strings.CutPrefix(raw, "-")
	mant, exp := raw, ""
	if i := strings.IndexAny(raw, "eE"); i >= 0 {
		mant, exp = raw[:i], raw[i:]
	}
	whole, frac, _ := strings.Cut(mant, ".")
	d.digits, d.point = whole+frac, len(whole)
	var ok bool
	if d.exp, ok = exponent(exp); !ok {
		return decimal{}, errOutOfRange
	}
	return d, nil
}

// jsonNumber reads a JSON number as a float64.
func jsonNumber(raw string) (any, error) {
	d, err := jsonDecimal(raw)
	if err != nil {
		return nil, err
	}
	return d.float()
}

// jsonInteger reads a JSON number as an int64, exactly.
func jsonInteger(raw string) (any, error) {
	d, err := jsonDecimal(raw)
	if err != nil {
		return nil, err
	}
	return d.integer()
}
