package politeness

import (
	"context"
	"fmt"
	"time"

	"github.com/crawler-dev/crawler/cluster"
)

// HostState is a host's budget as Redis holds it now.
type HostState struct {
	// InFlight is the number of live leases.
	InFlight int
	// Factor is the share of the rule's rate in use after backoff, (0, 1].
	Factor float64
	// Paused is how long the host stays paused, or 0.
	Paused time.Duration
}

// State reads host's budget, for status pages and tests.
func (b *Budget) State(ctx context.Context, host string) (HostState, error) {
	res, err := stateScript.Run(ctx, b.rdb, b.hostKeys(normalize(host)), cluster.RateFactor).Slice()
	if err != nil {
		return HostState{}, fmt.Errorf("state of %s: %w", host, err)
	}
	return HostState{InFlight: int(toInt64(res[0])), Factor: toFloat(res[1]),
		Paused: time.Duration(toInt64(res[2])) * time.Millisecond}, nil
}
