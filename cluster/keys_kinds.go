package cluster

// Found is the list of links the slaves found on item pages, one entry per
// page (a FoundLinks), waiting for the job's master to route them as it
// routes a list page's links.
func (j JobKeys) Found() string { return j.tag + ":found" }

// FoundActive is a sorted set of Found entries the master is routing,
// scored by the lease deadline.
func (j JobKeys) FoundActive() string { return j.tag + ":found:active" }

// FoundAttempts is the attempts hash of the Found entries.
func (j JobKeys) FoundAttempts() string { return j.tag + ":attempts:found" }
