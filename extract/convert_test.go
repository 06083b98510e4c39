package extract

import (
	"net/url"
	"testing"
)

// TestParseNumber reads prices and counts as shops and sites write them.
func TestParseNumber(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
	}{
		{"$1,299.00", 1299},
		{"1.299,00 €", 1299},
		{"1 299,50 zł", 1299.5},
		{"1\u00a0299,50\u00a0zł", 1299.5},
		{"1\u202f299,50 €", 1299.5},
		{"¥12,000", 12000},
		{"USD 12.5", 12.5},
		{"-3.5%", -3.5},
		{"−3,5 %", -3.5},
		{"- $5.00", -5},
		{"USD -5", -5},
		{"€ 1.234.567,89", 1234567.89},
		{"1,234,567.89", 1234567.89},
		{"£0.99", 0.99},
		{"0.125", 0.125},
		{"12,5", 12.5},
		{"12,50 €", 12.5},
		{"1,299", 1299},
		{"1.299", 1299},
		{"1.299,-", 1299},
		{"CHF 1'299.50", 1299.5},
		{"₹1,00,000", 100000},
		{"R$ 1.299,90", 1299.9},
		{"kr 1 299", 1299},
		{"Price: 49.99 USD (incl. 20% VAT)", 49.99},
		{"4.5 out of 5 stars", 4.5},
		{"1,024 reviews", 1024},
		{"2 3", 2},
		{"SKU-12", 12},
		{"  7  ", 7},
		{"￥3,980(税込)", 3980},
		{"约 1,299.00 元", 1299},
	} {
		got, err := ParseNumber(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseNumber(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "free", "N/A", "—"} {
		if got, err := ParseNumber(bad); err == nil {
			t.Errorf("ParseNumber(%q) = %v, want an error", bad, got)
		}
	}
}

func TestParseInteger(t *testing.T) {
	for in, want := range map[string]int64{"1,299.00": 1299, "3 reviews": 3, "1.299": 1299, "-12": -12, "10 000 views": 10000} {
		if got, err := ParseInteger(in); err != nil || got != want {
			t.Errorf("ParseInteger(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"12.5", "4,5 stars", "none"} {
		if got, err := ParseInteger(bad); err == nil {
			t.Errorf("ParseInteger(%q) = %d, want an error", bad, got)
		}
	}
}

// TestParseDate: the formats of RFC 3339, HTTP and mail headers, and of
// page text, all written as RFC 3339 in UTC.
func TestParseDate(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"2024-03-05", "2024-03-05T00:00:00Z"},
		{"2024-03-05T14:30:00Z", "2024-03-05T14:30:00Z"},
		{"2024-03-05T14:30:00+08:00", "2024-03-05T06:30:00Z"},
		{"2024-03-05T14:30:00.123+01:00", "2024-03-05T13:30:00.123Z"},
		{"2024-03-05T14:30:00+0800", "2024-03-05T06:30:00Z"},
		{"2024-03-05T14:30:00", "2024-03-05T14:30:00Z"},
		{"2024-03-05T14:30", "2024-03-05T14:30:00Z"},
		{"2024-03-05 14:30:00", "2024-03-05T14:30:00Z"},
		{"2024-03-05 14:30", "2024-03-05T14:30:00Z"},
		{"Tue, 05 Mar 2024 14:30:00 GMT", "2024-03-05T14:30:00Z"},
		{"Tue, 5 Mar 2024 14:30:00 +0100", "2024-03-05T13:30:00Z"},
		{"Tuesday, 05-Mar-24 14:30:00 GMT", "2024-03-05T14:30:00Z"},
		{"Mar 5, 2024", "2024-03-05T00:00:00Z"},
		{"March 5, 2024", "2024-03-05T00:00:00Z"},
		{"March 5th, 2024", "2024-03-05T00:00:00Z"},
		{"march 21st, 2024", "2024-03-21T00:00:00Z"},
		{"5 March 2024", "2024-03-05T00:00:00Z"},
		{"5 Mar 2024", "2024-03-05T00:00:00Z"},
		{"05-Mar-2024", "2024-03-05T00:00:00Z"},
		{"2024/03/05", "2024-03-05T00:00:00Z"},
		{"2024/3/5", "2024-03-05T00:00:00Z"},
		{"2024.03.05", "2024-03-05T00:00:00Z"},
		{"05.03.2024", "2024-03-05T00:00:00Z"},
		{"2024年3月5日", "2024-03-05T00:00:00Z"},
		{"2024年03月05日", "2024-03-05T00:00:00Z"},
		{"  Mar  5,\n 2024 ", "2024-03-05T00:00:00Z"},
		{"1709649000", "2024-03-05T14:30:00Z"},
		{"1709649000000", "2024-03-05T14:30:00Z"},
	} {
		got, err := ParseDate(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseDate(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"03/05/2024", "yesterday", "2024-13-01", "", "12345"} {
		if got, err := ParseDate(bad); err == nil {
			t.Errorf("ParseDate(%q) = %q, want an error", bad, got)
		}
	}
}

func TestParseBool(t *testing.T) {
	for in, want := range map[string]bool{"true": true, "Yes": true, " ON ": true, "1": true, "y": true,
		"FALSE": false, "no": false, "off": false, "0": false, "N": false} {
		if got, err := ParseBool(in); err != nil || got != want {
			t.Errorf("ParseBool(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseBool("InStock"); err == nil {
		t.Error("ParseBool(InStock) succeeded")
	}
}

func TestResolveURL(t *testing.T) {
	base, _ := url.Parse("https://shop.example/c/phones/?page=2")
	for in, want := range map[string]string{
		"/p/12":                    "https://shop.example/p/12",
		"../p/12":                  "https://shop.example/c/p/12",
		"//cdn.example.net/a.jpg":  "https://cdn.example.net/a.jpg",
		" http://other.example/x ": "http://other.example/x",
		"p/12?x=1#frag":            "https://shop.example/c/phones/p/12?x=1#frag",
	} {
		if got, err := resolveURL(base, in); err != nil || got != want {
			t.Errorf("resolveURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"javascript:void(0)", "mailto:a@b.c", "http://[::1"} {
		if got, err := resolveURL(base, bad); err == nil {
			t.Errorf("resolveURL(%q) = %q, want an error", bad, got)
		}
	}
}
