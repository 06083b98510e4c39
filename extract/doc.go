// Package extract pulls links and fields out of fetched pages for every
// process of the cluster: the master walks the links of non-item kinds,
// the slaves extract the fields of item kinds (and their links, which go
// back to the masters), and crawler check shows both for one page.
//
// A job's page kinds are compiled once (Compile, CompileJob) and run on
// each page with Kind.Extract: CSS selectors, XPath 1.0
// (github.com/antchfx/xpath) over the same parsed HTML, gjson paths over
// JSON pages and over a page's JSON-LD, regular expressions, and the
// conversions of a field's type (ParseNumber, ParseDate, ...).
//
// Extraction of one page has a bounded cost whatever the page and the
// selectors. CSS selectors are evaluated a set at a time (css.go), in work
// linear in the page for each compound selector, where cascadia
// backtracks (n^6 on n nested elements for "p div div div div div a").
// What can still cost more than linear time (text and position
// pseudo-classes, XPath, which is evaluated node by node) is charged to a
// work budget per page (Budget), and so is every other unit of work a
// page can cause: each pass of a gjson path, the one-pass walk of the
// JSON-LD blocks, each run of a regular expression, an element's text,
// each link resolved. Past the budget the page fails with ErrLimit (kind
// extract_limit), and a cancelled context stops the work too. JSON nested
// deeper than MaxJSONDepth is refused before gjson, which recurses once
// per level, reads it (ErrTooDeep), and the gjson modifiers a page could
// blow up are refused when a job is compiled (jobspec.CheckJSONPath).
//
// Document, Parse, Links and Fields are the calls of the short form's
// master and slaves; they run on the same engine.
package extract
