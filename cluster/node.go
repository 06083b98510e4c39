package cluster

import "time"

// DefaultMaxSlaves is the default size a of the virtual node table: the most
// slaves a cluster may ever have. Slave IDs run from 0 to a-1.
const DefaultMaxSlaves = 64

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
}
