package politeness

import (
	"math"
	"time"
)

// clockError bounds how far a process's reading of Redis's clock may be
// off (serverClock: half the quickest recent round trip, well under a
// millisecond on a LAN). Bookings leave room for it (limits.booking).
const clockError = time.Millisecond

// shardState is what a process knows of one shard of the budgets: its
// reading of the shard's server clock, until when its hold on its slots
// there is good, and when it last had a round there.
type shardState struct {
	clock      serverClock
	validUntil time.Time // the hold may have lapsed in Redis after this, on our clock
	lastRound  time.Time // when the last round was sent
	lastSweep  time.Time // when the last round that swept was sent
	lastProbe  time.Time // when the clock was last probed
}

func newShardState(now time.Time) *shardState {
	return &shardState{clock: serverClock{base: now}, lastSweep: now}
}

// serverClock maps times on a Redis server's clock, which bookings are
// made on, to the process's own clock, as NTP does: each round trip gives
// the offset between the two clocks at its midpoint, within half the
// round trip, and the quickest of the recent ones is trusted. On a busy
// machine most round trips are slow (a reply waits for its goroutine to
// run), so the window is long (clockSamples rounds): a process trusts the
// offset of a round trip that took a fraction of a millisecond, not one
// that took a hundred. The clocks do not drift apart in that time; a
// server's clock that is set anew shows as a sample that cannot agree
// with the trusted one, and the window starts again from it.
type serverClock struct {
	base    time.Time // the process's clock at local ms 0
	samples [clockSamples]clockSample
	n       int
	best    int           // index of the quickest sample
	rtt     time.Duration // recent round trips, smoothed
}

// clockSamples is how many recent round trips a serverClock keeps.
const clockSamples = 64

type clockSample struct {
	rtt      time.Duration
	offsetMS float64 // server ms - local ms since base, at the midpoint
}

// observe records a round trip sent at sent and answered at recv, during
// which the server's clock read serverMS.
func (c *serverClock) observe(sent, recv time.Time, serverMS float64) {
	rtt := max(recv.Sub(sent), 0)
	s := clockSample{rtt: rtt, offsetMS: serverMS - millis(sent.Add(rtt/2).Sub(c.base))}
	if c.n > 0 && !c.agrees(s) {
		c.n = 0 // the server's clock was set anew: start again from here
	}
	i := c.n % clockSamples
	c.samples[i] = s
	c.n++
	if c.n == 1 || i == c.best {
		c.best = c.quickest()
	} else if rtt < c.samples[c.best].rtt {
		c.best = i
	}
	if c.rtt == 0 {
		c.rtt = rtt
	}
	c.rtt = (7*c.rtt + rtt) / 8
}

// agrees reports whether s can be a reading of the clocks the trusted
// sample read: their offsets differ by no more than their errors (half
// of each round trip) and a millisecond.
func (c *serverClock) agrees(s clockSample) bool {
	b := c.samples[c.best]
	return math.Abs(s.offsetMS-b.offsetMS) <= millis(s.rtt/2+b.rtt/2)+1
}

// quickest is the index of the quickest sample held.
func (c *serverClock) quickest() int {
	best := 0
	for i := 1; i < min(c.n, clockSamples); i++ {
		if c.samples[i].rtt < c.samples[best].rtt {
			best = i
		}
	}
	return best
}

// probeWanted reports whether the clock should be read on its own: its
// quickest recent round trip (if any) took longer than probeRTT, so a
// booked time may be off by half of it, and the last probe was long
// enough ago. Probes are few: one in probeEvery at most, while rounds
// are slow.
func (c *serverClock) probeWanted(now, last time.Time) bool {
	return now.Sub(last) >= probeEvery && (c.n == 0 || c.samples[c.best].rtt > probeRTT)
}

// probeRTT and probeEvery: see probeWanted.
const (
	probeRTT   = 2 * time.Millisecond
	probeEvery = 250 * time.Millisecond
)

// offset is server ms - local ms of the quickest recent round trip.
func (c *serverClock) offset() float64 { return c.samples[c.best].offsetMS }

// local maps serverMS to the process's clock.
func (c *serverClock) local(serverMS float64) time.Time {
	return c.base.Add(time.Duration((serverMS - c.offset()) * float64(time.Millisecond)))
}

// lead is how far ahead of the server's now a booked time must be to
// reach the process before it is due: a couple of recent round trips.
func (c *serverClock) lead() time.Duration {
	return min(2*c.rtt+time.Millisecond, 100*time.Millisecond)
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
