// Package ledger is a job's ledger in Redis: the one owner of its state
// hash and counters, and of the steps that change them, from a job's
// submission to its end and a detail page's discovery to its outcome.
// Every such step is a script of one set (Steps), composed from the
// fragments in lua/ (luascript.Set):
//
//   - admit (lua/admit.lua): the new links a dupefilter check found are
//     pushed onto their slaves' queues and counted routed, the others
//     duplicates, in the same script as the check (dedup composes its
//     membership check with this fragment: one round trip per batch);
//   - ack (lua/ack.lua, Ledger.Ack): a slave's outcomes are counted
//     stored, failed or skipped, each task once, and only while it is in
//     flight, so a task redelivered after a lapsed lease or a dead holder
//     is counted by one delivery alone;
//   - cancel (lua/cancel.lua, after lua/kinds.lua): the one script that
//     stops a job. Client cancel asks (Ledger.AskCancel: a job some master
//     holds is marked for it, one nobody holds that has nothing queued is
//     finished at once); the job's master carries it out, fenced
//     (Steps composed after its fence): the tasks queued, and those
//     whose lease lapsed, are dropped and counted cancelled, and the job
//     is finished once nothing of it is in flight;
//   - pause and resume (lua/pause.lua, Ledger.Pause; lua/resume.lua,
//     Ledger.Resume): a paused job keeps its queues, leases and counters
//     as they are, the state it was paused in kept for resume to
//     restore; its master and slaves stop taking its work meanwhile, and
//     the master's steps see it (a round neither starts nor finishes
//     while it is paused). A job being cancelled is neither paused nor
//     resumed;
//   - submit and reset (lua/submit.lua, Ledger.Submit: a finished job
//     submitted anew restarts its counters), retry (lua/retry.lua,
//     Ledger.Retry: failed tasks go back, counted failed until acked
//     again), and a master's steps, composed after its fence: the start
//     and finish of a round (lua/start_round.lua, lua/finish.lua) and the
//     commit of a list page or of Found entries with what they counted
//     (lua/commit_list.lua, lua/commit_found.lua), each counted once
//     however often the page was fetched.
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
