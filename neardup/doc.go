// Package neardup finds near-duplicate content across a job: the same
// article published under several URLs. A slave computes each page's
// 64-bit Simhash over its extracted text and asks the job's Index, in one
// Redis script per batch of pages, whether a page within MaxDistance bits
// was stored inside the job's dedup window; if none was, the page becomes
// an entry of the index itself.
//
// The index forgets: every entry expires with the window after its last
// add, and a page that is fetched again replaces its own entry. Entries
// live in one Redis HASH per generation, the entries added in one window
// of time; a generation's key expires a window after its last add. So the
// live entries are all in the current generation and the one before, a
// job that re-crawls for months holds at most two windows of pages in
// Redis, and one that stops holds nothing a window later; nothing needs
// sweeping.
//
// A call reads what it needs of the two generations up front (one HMGET
// each), works on its pages one after another in the script, and writes
// what changed at the end (one HSET): a handful of commands per call, not
// per page. An entry is a field named by a digest of its ID (holding its
// hash, expiry and ID) and a record of 16 bytes (hash and digest) in each
// of its four band values' fields, as the pigeonhole search needs: about
// 455 bytes per entry measured with 38-byte IDs and 20,000 pages over two
// generations, when most band values still have a field of their own, 365
// with 200,000; a fuller index shares them.
//
// Every key lives under the namespace the caller gives, which carries the
// job's Redis Cluster hash tag (cluster.JobKeys.Simhash), so one script
// touches one slot. (The index kept its entries in ns:zband:* and ns:id:*
// keys before; a running job's old keys expire by themselves a window
// after their last add, and the entries in them are not found.) The
// package does not depend on the URL dupefilter (package dedup).
package neardup
