package canon

import (
	"strconv"
	"testing"
)

func BenchmarkURLFingerprint(b *testing.B) {
	for i := 0; b.Loop(); i++ {
		if _, _, err := URLFingerprint("https://News.Example.com/a/./b/item?id=" + strconv.Itoa(i) + "&b=2&a=1#x"); err != nil {
			b.Fatal(err)
		}
	}
}
