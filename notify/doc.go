// Package notify sends a job's webhooks: the masters' side of a job
// file's notify list (docs/webhooks.md).
//
// A transition a webhook may ask for (a round finished or failed, the job
// cancelled or paused) is recorded by the job ledger's own script, in the
// same step as the transition, as an event on the job's outbox in Redis
// (cluster.JobKeys.Outbox, ledger/lua/outbox.lua). Every master runs a
// Notifier, which finds the outboxes that hold events, takes each event
// under a lease (queue.Leased: one master sends it, and another takes it
// over should that one die), and POSTs it, as JSON (Event), to every
// webhook of the job's notify list that asks for it: signed with
// HMAC-SHA256 over a timestamp and the body (Sign, Verify), through the
// crawler's address guard (fetch.DialControl), retried with exponential
// backoff a bounded number of times. A webhook that answered 2xx is marked
// sent for that event, so an event taken over after its sender died is
// sent only where it has not arrived; the one window left (the sender
// dies between the answer and the mark) is closed by the receiver, which
// sees the same event ID twice. A webhook that could not be sent is
// recorded among the job's warnings (cluster.JobKeys.NotifyWarnings,
// shown by client status). Sending runs beside the jobs, never in their
// way: the job's master finishes it whether or not anyone is listening.
package notify
