package client

import "sort"

// webhookWarnings are the job's webhook failures, as the masters that send
// its events record them (cluster.JobKeys.NotifyWarnings: one per
// webhook, the last failure), in a stable order.
func webhookWarnings(failures []string) []string {
	sort.Strings(failures)
	return failures
}
