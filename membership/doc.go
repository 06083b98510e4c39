// Package membership keeps the cluster's live node table in Redis: slaves
// register under their ID and renew a heartbeat lease; masters take
// snapshots of the table (a version plus the live nodes and their weights)
// and route each batch of URLs over one snapshot with package assign.
//
// The table lives in the keys of cluster.Keys.Nodes(), which share one hash
// tag, so every multi-key step is one Lua script:
//
//   - Leases, a sorted set of slave ID -> lease deadline (unix ms);
//   - Info, a hash of slave ID -> cluster.NodeInfo as JSON;
//   - Epoch, the table's version, bumped on every join and leave;
//   - Config (NodeKeys.Config), a hash recording the cluster's max_slaves,
//     so that processes that disagree on the size of the virtual node table
//     refuse to work instead of routing the same URL differently.
//
// Lease deadlines come from the Redis server's clock (TIME inside the
// scripts), so the clocks of the slave and master hosts do not matter. A
// lease that lapses is dropped, and the epoch bumped, by the next Snapshot:
// a master polling with Watch notices a dead slave within Lease plus one
// polling interval. A lapsed ID may be registered again, by the same slave
// or a new process; a live ID held by another token (another run) is
// refused with ErrIDTaken.
//
// Errors from Redis scripts are translated here into the sentinels
// ErrIDTaken, ErrLeaseLost and ErrMaxSlavesMismatch; bad arguments wrap
// ErrInvalidNode. Callers test them with errors.Is.
package membership
