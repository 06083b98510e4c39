package bytesize

import "testing"

func TestParse(t *testing.T) {
	for in, want := range map[string]int64{"268435456": 268435456, "256MiB": 256 << 20, "1GiB": 1 << 30, "1gib": 1 << 30,
		"100MB": 100e6, "64k": 64 << 10, "1.5KiB": 1536, "0": 0} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "lots", "-1MiB", "MiB"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) worked", bad)
		}
	}
}
