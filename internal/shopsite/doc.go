// Package shopsite is a loopback shop for re-crawl tests and benchmarks:
// products /p/0 .. /p/n-1 listed on /list, whose titles carry a version
// that Change bumps, and whose pages carry, outside any field, a banner
// that differs on every request (an ad, a clock). With validators it sends
// an ETag per version and answers 304 to it.
package shopsite
