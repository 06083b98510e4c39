// Package ledger is a job's ledger in Redis: the one owner of the steps
// that count a detail page from its discovery to its outcome. Every such
// step is a script composed from the fragments in lua/ (luascript.Set):
//
//   - admit (lua/admit.lua): the new links a dupefilter check found are
//     pushed onto their slaves' queues and counted routed, the others
//     duplicates, in the same script as the check (dedup composes its
//     membership check with this fragment: one round trip per batch);
//   - ack (lua/ack.lua, Ledger.Ack): a slave's outcomes are counted
//     stored, failed or skipped, each task once, and only while it is in
//     flight, so a task redelivered after a lapsed lease or a dead holder
//     is counted by one delivery alone.
//
// Taking, handing back and reclaiming tasks (package queue) move a task
// between queued and in flight and count nothing. Together they keep
//
//	discovered = stored + failed + skipped + duplicates + cancelled + queued + in flight
//
// at every step (discovered = routed + duplicates), which the package's
// property test checks after each of a seeded random sequence of steps.
//
// Every key a script touches is one job's (cluster.JobKeys), under its
// hash tag, so one script touches one slot.
package ledger
