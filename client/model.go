package client

import (
	"crypto/sha1"
	"encoding/hex"
	"net/url"
	"strconv"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/jobspec"
)

// frontierEntries are the entries the job's rounds start from, as the
// frontier keeps them ("<40 hex fingerprint> <list page>"): its seeds,
// each of its kind, then one per sitemaps entry (for url: robots, one per
// seed host), which the master walks.
func frontierEntries(spec *jobspec.Job) ([]any, error) {
	out, err := seedEntries(spec)
	if err != nil {
		return nil, err
	}
	for i, rule := range spec.Sitemaps {
		for _, u := range sitemapRoots(rule, spec.Seeds) {
			page := cluster.ListPage{URL: u, Kind: rule.Kind, Sitemap: i + 1}
			sum := sha1.Sum([]byte("sitemaps:" + strconv.Itoa(i) + ":" + u))
			out = append(out, hex.EncodeToString(sum[:])+" "+page.Encode())
		}
	}
	return out, nil
}

// sitemapRoots are the URLs of a sitemaps entry's frontier entries: its
// sitemap, or for url: robots the first seed of each seed host.
func sitemapRoots(rule jobspec.SitemapRule, seeds []string) []string {
	if rule.URL != jobspec.SitemapsFromRobots {
		return []string{rule.URL}
	}
	var out []string
	hosts := map[string]bool{}
	for _, s := range seeds {
		u, err := url.Parse(s)
		if err != nil || hosts[u.Host] {
			continue
		}
		hosts[u.Host] = true
		out = append(out, s)
	}
	return out
}
