// Package render loads pages in headless Chromium, so that a kind whose
// pages are built by script (render: true in the job file) is read from
// the DOM its scripts leave rather than from the HTML the server sent.
//
// A process (slave, master, run, check) holds one Renderer: one browser,
// started at the first rendering, driven over the DevTools protocol
// (chromedp), and a pool of tabs of its own size (Options.Tabs, the
// --render-concurrency flag), apart from the process's fetch workers. The
// browser is restarted when it crashes, or between pages when its
// processes grew past Options.MaxMemory; the renderings it was running
// when it crashed fail as transient and are retried by their caller.
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
//     job's proxy choice, the address guard, its cookie jar), or without
//     one (crawler check) by the renderer's own fetcher, directly with the
//     address guard, and answered to the page with Fetch.fulfillRequest,
//     with the site's headers but those of one hop and Set-Cookie.
//
// The browser never opens a network connection of its own: its only proxy
// is a loopback listener that refuses every connection, host names
// resolve to nothing, and WebRTC may send no UDP and is hidden from the
// page (seal.go). What the Fetch domain does not pause (a WebSocket,
// WebRTC, the browser's own background requests) fails there.
//
// Each rendering runs in a browser context of its own, emptied after it,
// so nothing the browser holds passes from one job to another; cookies
// last from page to page only through the caller's Page.Jar (one per
// job), loaded into the tab before the page and read back after it. A
// page is read once its wait_for matches or, without one, once its
// network went quiet (no request in flight for QuietFor after the load
// event). A rendering is bounded by its render_timeout; passing it is
// ErrTimeout. A page that navigates its tab somewhere that fails is
// ErrNavigation, not the browser's error page; one that passes the memory
// cap while it renders is ErrMemory (memory.go). Render returns the DOM
// as HTML, to be read by package extract exactly as a fetched body.
package render
