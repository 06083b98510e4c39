package politeness

import (
	"context"
	"fmt"
	"testing"

	"github.com/crawler-dev/crawler/internal/testenv"
)

// BenchmarkRound: what one round costs Redis, by the hosts it settles
// (each books a time and peeks at its slots, as most rounds do).
func BenchmarkRound(b *testing.B) {
	for _, hosts := range []int{0, 1, 4, 16, 64} {
		b.Run(fmt.Sprintf("hosts=%d", hosts), func(b *testing.B) {
			rdb, keys := testenv.Redis(b)
			k := keys.Politeness(0)
			args := []any{"p1", 5000, 60000, 0, 0, 0.5, 0.01, 0.1, 1000, 10000, 1000, 0.5, 1000}
			for h := range hosts {
				args = append(args, fmt.Sprintf("h%d.test", h), -1, 1, 1, 1.5, 200.0, 1, 8, 1, 0, 0, 0)
			}
			ctx := context.Background()
			for b.Loop() {
				if err := roundScript.Run(ctx, rdb, []string{k.Hosts(), k.Live()}, args...).Err(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
