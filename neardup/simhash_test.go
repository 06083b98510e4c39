package neardup

import (
	"math/bits"
	"strings"
	"testing"
)

const (
	enA = `The city council voted on Tuesday to expand the bus network, adding
six new routes that will connect the northern suburbs with the central
station. Officials said the plan, which had been debated for more than two
years, would cut commuting times by up to twenty minutes for thousands of
residents, and that the first routes should open early next spring.`
	enB = `Researchers at the university have found that a common garden plant
can remove heavy metals from contaminated soil far faster than expected.
The team grew the plant on former industrial land for three seasons and
measured a steady fall in lead and cadmium, which they hope will offer a
cheap way to clean up old factory sites across the region.`
	zhA = `市议会周二投票决定扩大公交网络，新增六条线路，连接北部郊区与中央车站。
官员表示，这项计划已经讨论了两年多，将为数千名居民缩短最多二十分钟的通勤时间，
首批线路预计将于明年初春开通。交通部门还将同步调整现有线路的发车频率。`
	zhB = `大学的研究人员发现，一种常见的园林植物清除土壤中重金属的速度远超预期。
研究团队在一片废弃工业用地上连续种植了三个季节，测得铅和镉的含量持续下降，
他们希望这能为清理该地区的旧工厂用地提供一种廉价的方法。`
)

func TestSimhash(t *testing.T) {
	tests := []struct {
		name    string
		a, b    string
		maxDist int // -1: must be at least minDist
		minDist int
	}{
		{"english small edit", enA, strings.Replace(enA, "six new routes", "seven new routes", 1), MaxDistance, 0},
		{"english reformatted", enA, strings.ToUpper(strings.Join(strings.Fields(enA), "  ")) + "!!", 0, 0},
		{"chinese small edit", zhA, strings.Replace(zhA, "六条", "七条", 1), MaxDistance, 0},
		{"chinese punctuation", zhA, strings.NewReplacer("，", ",", "。", ".").Replace(zhA), 0, 0},
		{"english unrelated", enA, enB, -1, 12},
		// The same words in another order are another text: word shingles
		// see the order that bare words (or letter bigrams) would not.
		{"english same words reordered", enA, reverseWords(enA), -1, 12},
		{"chinese unrelated", zhA, zhB, -1, 12},
		{"chinese vs english", zhA, enA, -1, 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := hamming(Simhash(tt.a), Simhash(tt.b))
			if tt.maxDist >= 0 && d > tt.maxDist {
				t.Fatalf("distance %d, want <= %d", d, tt.maxDist)
			}
			if tt.maxDist < 0 && d < tt.minDist {
				t.Fatalf("distance %d, want >= %d", d, tt.minDist)
			}
		})
	}
	t.Run("different chinese texts do not collide", func(t *testing.T) {
		seen := map[uint64]string{}
		for _, s := range []string{zhA, zhB, "今天天气很好", "明天会下雨", "股市今日大涨", "新闻"} {
			h := Simhash(s)
			if prev, dup := seen[h]; dup {
				t.Fatalf("%q and %q share hash %x", prev, s, h)
			}
			seen[h] = s
		}
	})
	t.Run("hamming", func(t *testing.T) {
		if hamming(0, 0) != 0 || hamming(0, ^uint64(0)) != 64 || hamming(0b1011, 0b0001) != 2 {
			t.Fatal("hamming wrong")
		}
	})
}

func reverseWords(s string) string {
	w := strings.Fields(s)
	for i, j := 0, len(w)-1; i < j; i, j = i+1, j-1 {
		w[i], w[j] = w[j], w[i]
	}
	return strings.Join(w, " ")
}

// BenchmarkSimhash hashes an English and a Chinese article of about a
// thousand bytes together, and the English ones alone (the ASCII path),
// beside refSimhash, the first way of computing it.
func BenchmarkSimhash(b *testing.B) {
	for _, text := range []struct{ name, text string }{{"en+zh", enA + "\n" + zhA}, {"en", enA + "\n" + enB}} {
		for _, way := range []struct {
			name string
			hash func(string) uint64
		}{{"now", Simhash}, {"reference", refSimhash}} {
			b.Run(text.name+"/"+way.name, func(b *testing.B) {
				b.SetBytes(int64(len(text.text)))
				b.ReportAllocs()
				for b.Loop() {
					way.hash(text.text)
				}
			})
		}
	}
}

// hamming returns the number of bits in which a and b differ.
func hamming(a, b uint64) int { return bits.OnesCount64(a ^ b) }
