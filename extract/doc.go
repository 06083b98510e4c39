// Package extract pulls links and fields out of fetched HTML with goquery:
// the master uses it for next_link and detail_link on list pages, the slaves
// for a job's fields on detail pages.
package extract
