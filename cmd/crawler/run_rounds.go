package main

import (
	"fmt"

	"github.com/crawler-dev/crawler/jobspec"
)

// refuseRecurring refuses a job with recrawl_every or schedule: crawler run
// crawls one round and exits, so its later rounds would silently never
// happen. A cluster (crawler master, slave, client submit) runs them.
func refuseRecurring(spec *jobspec.Job) error {
	var field string
	switch {
	case spec.Schedule != "":
		field = fmt.Sprintf("schedule: %q", spec.Schedule)
	case spec.RecrawlEvery > 0:
		field = fmt.Sprintf("recrawl_every: %s", spec.RecrawlEvery)
	default:
		return nil
	}
	return fmt.Errorf("job %s sets %s, but crawler run crawls one round and exits: "+
		"remove it to crawl once here, or submit the job to a cluster (crawler client submit) to run its rounds", spec.Name, field)
}
