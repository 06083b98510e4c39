package cluster

import "time"

// DefaultMaxSlaves is the default size of the virtual node table: the
// most slaves a cluster may ever have. Slave IDs run from 0 to that size
// less one.
const DefaultMaxSlaves = 64

// MaxSlavesLimit is the largest virtual node table a cluster may have.
const MaxSlavesLimit = 4096

// CheckMaxSlaves says what is wrong with a virtual node table of n slaves,
// or nil when it is within 1..MaxSlavesLimit.
func CheckMaxSlaves(n int) error {
	if n < 1 || n > MaxSlavesLimit {
		return Invalid("MaxSlaves", n, "is outside 1..%d", MaxSlavesLimit)
	}
	return nil
}

// NodeInfo describes a registered slave.
type NodeInfo struct {
	// ID is the slave's stable identity, 0 <= ID < max slaves.
	ID int `json:"id"`
	// Weight is the slave's capacity; URLs are spread in proportion to it.
	Weight float64 `json:"weight"`
	// Host and PID say where the slave runs.
	Host string `json:"host"`
	PID  int    `json:"pid"`
	// Concurrency is how many pages the slave fetches at once.
	Concurrency int `json:"concurrency"`
	// Token identifies one run of the slave, so a stale process cannot renew
	// a lease that a newer process holds.
	Token string `json:"token"`
	// StartedAt is when the slave registered.
	StartedAt time.Time `json:"started_at"`
	// Render is true when the slave has a browser and renders the pages
	// of kinds that say render: the masters route those kinds' tasks only
	// among such slaves, and park them (JobKeys.RenderWait) while none is
	// live.
	Render bool `json:"render,omitempty"`
}
