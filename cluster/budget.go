package cluster

// Budget is the hash that counts a round's pages against the job's
// budget (jobspec.Budget) as they are admitted: BudgetPages, and one
// BudgetHostPrefix field per host. A round starts it empty.
func (j JobKeys) Budget() string { return j.tag + ":budget" }

// Fields of the Budget hash.
const (
	BudgetPages      = "pages" // list and item pages admitted this round
	BudgetHostPrefix = "h:"    // + host: that host's pages admitted this round
)

// StateBudgetReached is the State hash field that names the budget a
// round reached (jobspec.BudgetMaxPages, ...): from then on nothing more
// is admitted, and the round ends once what was admitted is done.
const StateBudgetReached = "budget_reached"

// Counters of the Stats hash that budgets keep. A detail link refused
// for a budget is discovered (routed) and counted skipped and
// skipped_<budget>; a list page refused is counted in skipped_<budget>
// alone, as list pages are not discovered.
const (
	StatBytes                  = "bytes"                      // body bytes of the pages fetched, list and item pages
	StatHostsClosed            = "hosts_closed"               // hosts that reached max_pages_per_host, once a round each
	StatSkippedMaxPages        = "skipped_max_pages"          // links past max_pages
	StatSkippedMaxPagesPerHost = "skipped_max_pages_per_host" // links to a host past max_pages_per_host
	StatSkippedMaxBytes        = "skipped_max_bytes"          // links and tasks dropped once max_bytes was reached
	StatSkippedMaxDuration     = "skipped_max_duration"       // links and tasks dropped once max_duration was reached
)
