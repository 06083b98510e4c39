// Package neardup finds near-duplicate content across a job: the same
// article published under several URLs. A slave computes each page's
// 64-bit Simhash over its extracted text and asks the job's Index, per
// batch of pages, whether a page within MaxDistance bits was stored inside
// the job's dedup window; if none was, the page becomes an entry of the
// index itself.
//
// The index forgets: every entry expires with the window after its last
// add, and a page that is fetched again replaces its own entry.
//
// Redis holds the index as logs: one append-only STRING per generation,
// the records written in one window of time (an add: the page's ID, hash
// and expiry; or a drop of an ID's entry), expiring a window after its
// last append. So the live entries are all in the current generation's
// log and the one before, a job that re-crawls for months holds at most
// two windows of records in Redis (about 20 bytes and the ID per page),
// and one that stops holds nothing a window later; nothing needs sweeping.
//
// Every process keeps a mirror of the two logs, replayed into entries
// chained by band value (the pigeonhole search compares a hash only with
// the entries that share one of its four 16-bit bands), and decides a
// batch in process. It then appends the batch's records in one script
// call that checks its mirror is whole: both logs as long as it read
// them. If another process appended first, the call replies the bytes the
// mirror lacks instead, and the batch is decided again. So each batch is
// decided against everything written before it, as if one process kept
// the index, and Redis does no searching: a batch costs it a few commands
// and the bytes of its records. A process holds about 130 bytes per
// record of the two windows, plus a fixed 1 MiB of chain heads per job.
//
// Every key lives under the namespace the caller gives, which carries the
// job's Redis Cluster hash tag (cluster.JobKeys.Simhash), so one script
// touches one slot. (The index kept its entries in ns:gen:* hashes
// before; a running job's old keys expire by themselves a window after
// their last add, and the entries in them are not found.) The package does
// not depend on the URL dupefilter (package dedup).
package neardup
