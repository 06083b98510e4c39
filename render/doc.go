// Package render loads pages in headless Chromium, so that a kind whose
// pages are built by script (render: true in the job file) is read from
// the DOM its scripts leave rather than from the HTML the server sent.
//
// A process (slave, master, run, check) holds one Renderer: one browser,
// started at the first rendering, driven over the DevTools protocol
// (chromedp), and a pool of tabs of its own size (Options.Tabs, the
// --render-concurrency flag), apart from the process's fetch workers. The
// browser is restarted when it crashes or its processes grow past
// Options.MaxMemory; the renderings it was running fail as transient and
// are retried by their caller.
//
// The page's document itself is not requested by the browser: the caller
// fetches it the way every page is fetched (robots.txt, the host's
// cluster-wide budget, the job's proxy choice, the address guard) and
// hands its body to Render, which serves it to the tab. Every other
// request the page makes is paused (the DevTools Fetch domain) and
//
//   - failed when its resource type is one the job blocks (images, fonts,
//     media by default), so the site never sees it;
//   - failed when its host resolves to an address the job may not reach
//     (fetch.CheckHost, the SSRF guard);
//   - for the page's own host, admitted by the caller's Admit function
//     (robots.txt and a place in the host's budget, held until the answer
//     arrives);
//   - then sent by the caller's Page.Fetch (the crawl's fetch path: the
//     job's proxy choice, the address guard, its cookie jar) and answered
//     to the page with Fetch.fulfillRequest, so that the browser never
//     reaches the network itself; without Page.Fetch (crawler check), the
//     browser sends it.
//
// Each rendering runs in a browser context of its own, emptied after it,
// so nothing the browser holds passes from one job to another; cookies
// last from page to page only through the caller's Page.Jar (one per
// job), loaded into the tab before the page and read back after it. A
// rendering is bounded by its render_timeout; passing it is ErrTimeout.
// Render returns the DOM as HTML, to be read by package extract exactly as
// a fetched body.
package render
