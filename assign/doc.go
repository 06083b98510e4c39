// Package assign routes each detail URL to the slave that fetches it: the
// two-level hash of the seed paper (004), with a weighted rendezvous second
// level. It is pure logic with no I/O; the master feeds it the live node
// table that package membership keeps in Redis, and every master computing a
// route over the same table gets the same answer.
//
// # The two levels
//
// The virtual node table has a slots (the most slaves the cluster may ever
// have; slave IDs are 0..a-1). For a key (the URL's fingerprint):
//
//  1. First level: s = h1(key) mod a. If slave s is live (and accepts the
//     key, see below), route to s.
//  2. Second level: weighted rendezvous (highest random weight) hashing over
//     the live table: every live node i draws u_i(key) in (0,1) from a 64-bit
//     mix of the key hash and i's ID, and the node with the highest
//     -w_i/ln(u_i) wins. Equivalently the smallest E_i = -ln(u_i)/w_i, and
//     E_i is exponentially distributed with rate w_i.
//
// ModePaper keeps the paper's literal second level, live[h1(key) mod n]. It
// is there for comparison only: it is not monotone (with a = 64 and n = 10,
// one slave joining or leaving moves about 77% of all URLs).
//
// # Weights
//
// The first level alone gives every live slot 1/a of the keys whatever its
// weight, so first level + weighted rendezvous is not proportional: slave i
// would get 1/a + (1 - n/a)·w_i/W, where W is the live weight. Rescaling the
// second-level weights to make up the difference (w_i/W - 1/a) fixes the
// shares but breaks monotonicity: the rescaled weights change their ratios
// whenever W changes, so a join or leave moves keys between bystanders (and a
// light node's residual would go negative).
//
// Instead the first-level hit is accepted only with a probability that
// depends on the node's own weight and a cluster constant, never on the rest
// of the table: node s accepts a key of its slot when v(key) < q_s, where
// v(key) is uniform in [0,1) and independent of the slot and the rendezvous
// draws, and q_s = w_s/M with M = Options.MaxWeight. A rejected key falls
// through to the rendezvous over all live nodes with their plain weights.
//
// Shares are exactly proportional. For a live node i:
//
//	P(i) = P(slot i, accepted) + P(fall through)·P(i wins the race)
//	     = (1/a)(w_i/M) + (1 - Σ_j (1/a)(w_j/M))·(w_i/W)
//	     = w_i/(aM) + (1 - W/(aM))·(w_i/W)
//	     = w_i/W.
//
// Churn is ideal. Route(S, key) is "the first live node in a per-key order":
// the slot node if it accepts, then every node by increasing E_i. That order
// is fixed by the key, the node IDs, each node's own weight and M; it does not
// depend on which nodes are live. So when node j leaves, a key moves only if
// it was routed to j (share w_j/W), and when j joins a key moves only if it
// now goes to j (share w_j/(W+w_j)): exactly the keys that must move.
// The property tests check both the shares and that every moved key left or
// reached the node that changed.
//
// With equal weights equal to M (the default: weights and M are 1) every
// first-level hit is accepted and the scheme is exactly the paper's first
// level followed by plain rendezvous hashing. The price of exact weighting is
// M: it must be the same on every master and at least every weight (a larger
// weight counts as M), and a node lighter than M gives up part of its own
// slot to the rendezvous. Mode ModePaper ignores weights.
//
// # Use
//
// Build an Assigner once, take a Snapshot of each version of the live table
// (one routing batch uses one snapshot), and call Snapshot.Route per key.
// Route does not allocate and is safe for concurrent use.
package assign
