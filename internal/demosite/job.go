package demosite

import "fmt"

// JobYAML is a job file for the site at baseURL (e.g. http://127.0.0.1:8080).
func JobYAML(name, baseURL string) string {
	return fmt.Sprintf(`name: %s
seeds: ["%s/list/1"]
allow_private_networks: true
next_link:   {css: "a.next", attr: href}
detail_link: {css: ".item a", attr: href}
fields:
  title: {css: "h1"}
  body:  {css: "#content"}
  tags:  {css: ".tag", all: true}
  image: {css: "img.main", attr: src}
dedup: {window: 168h, granularity: 24h, capacity: 100000, error_rate: 0.001}
max_retries: 2
`, name, baseURL)
}
