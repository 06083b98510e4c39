package robots

import "github.com/jimsmart/grobotstxt"

// Sitemaps returns the URLs of a robots.txt's Sitemap: lines, in file
// order, as written: they stand outside any group, so they are the same
// for every user agent. Only the first MaxBodyBytes count, as for rules.
func Sitemaps(body []byte) []string {
	return grobotstxt.Sitemaps(string(truncate(body)))
}
