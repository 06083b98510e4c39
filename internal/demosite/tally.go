package demosite

// Tally is what the counters of `client status` say once a correct crawl
// of the whole site (every list page, one round, nothing cancelled) is
// finished, with robots.txt obeyed. Every detail link found is either left
// out before it is discovered (RobotsDisallowed; offsite links aside) or
// discovered, and every discovered link ends as exactly one of the rest:
//
//	Discovered = Stored + Failed + SkippedNotHTML + Duplicates
//
// Duplicates assumes the dupefilter makes no false positive (at the demo
// job's capacity, one in a million or so per link).
type Tally struct {
	// Discovered is the detail links admitted: allowed by robots.txt, on
	// the site's own host.
	Discovered int
	// Stored is the detail pages stored as items.
	Stored int
	// Failed is the detail pages recorded as failed: the gone ones (404),
	// and the redirect loop (Options.RedirectLoop).
	Failed int
	// SkippedNotHTML is the PDF detail pages: skipped, kind not_html.
	SkippedNotHTML int
	// Duplicates is the detail links to a page an earlier list page
	// linked already.
	Duplicates int
	// RobotsDisallowed is the detail links robots.txt disallows, each
	// time a list page links one; they are not discovered.
	RobotsDisallowed int
	// Offsite is the offsite links: one ad per list page.
	Offsite int
}

// Tally returns what a correct crawl of the site counts.
func (s *Site) Tally() Tally {
	var t Tally
	t.Offsite = s.ListPages()
	for n := 1; n <= s.ListPages(); n++ {
		for _, id := range s.detailsOn(n) {
			if s.disallowed(id) {
				t.RobotsDisallowed++
				continue
			}
			t.Discovered++
		}
	}
	for id := s.opts.FirstID; id <= s.lastID(); id++ {
		switch s.outcome(id) {
		case Stored:
			t.Stored++
		case Gone:
			t.Failed++
		case NotHTML:
			t.SkippedNotHTML++
		}
	}
	if s.opts.RedirectLoop { // every list page links the loop; it fails once
		t.Discovered += s.ListPages()
		t.Failed++
	}
	t.Duplicates = t.Discovered - t.Stored - t.Failed - t.SkippedNotHTML
	return t
}
