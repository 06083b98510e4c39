package bench

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Tap is a loopback TCP proxy in front of Redis that counts what the
// process connected through it sends: its commands by name, a script call
// by the script's name, and its round trips. Redis's own statistics
// cannot tell the commands a client sent from the ones its scripts ran,
// nor a pipeline from single commands; the tap sees the wire.
//
// A round trip is a burst of requests on one connection that follows a
// reply: go-redis writes a command or a whole pipeline, then waits for
// every reply, so each burst is one wait for Redis.
type Tap struct {
	ln       net.Listener
	upstream string
	scripts  *scriptNames

	roundTrips atomic.Int64
	mu         sync.Mutex
	commands   map[string]int64
	conns      map[net.Conn]struct{}
	closed     bool
	wg         sync.WaitGroup
}

// TapCounts is what a tap has counted.
type TapCounts struct {
	// RoundTrips is the number of request bursts, each one wait for Redis.
	RoundTrips int64
	// Commands counts the commands sent by name ("hget", "script
	// Ledger.Ack" for EVALSHA or EVAL of that script, ...).
	Commands map[string]int64
}

// Sent is the number of commands sent.
func (c TapCounts) Sent() int64 {
	var n int64
	for _, v := range c.Commands {
		n += v
	}
	return n
}

// Sub returns c minus an earlier reading.
func (c TapCounts) Sub(earlier TapCounts) TapCounts {
	out := TapCounts{RoundTrips: c.RoundTrips - earlier.RoundTrips, Commands: map[string]int64{}}
	for k, v := range c.Commands {
		if d := v - earlier.Commands[k]; d != 0 {
			out.Commands[k] = d
		}
	}
	return out
}

// Add returns the sum of c and other.
func (c TapCounts) Add(other TapCounts) TapCounts {
	out := TapCounts{RoundTrips: c.RoundTrips + other.RoundTrips, Commands: maps.Clone(c.Commands)}
	if out.Commands == nil {
		out.Commands = map[string]int64{}
	}
	for k, v := range other.Commands {
		out.Commands[k] += v
	}
	return out
}

// newTap listens on a loopback port and relays every connection to
// upstream (host:port), naming scripts with names.
func newTap(upstream string, names *scriptNames) (*Tap, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("tap: %w", err)
	}
	t := &Tap{ln: ln, upstream: upstream, scripts: names, commands: map[string]int64{}, conns: map[net.Conn]struct{}{}}
	t.wg.Add(1)
	go t.accept()
	return t, nil
}

// Addr is the address processes connect to instead of Redis's.
func (t *Tap) Addr() string { return t.ln.Addr().String() }

// Counts returns what the tap has counted so far, naming each script by
// what is known of it now: a script's first call may be an EVALSHA that
// fails before its source is sent. A request is relayed as its bytes
// arrive and counted once it is parsed, so the count of the last one may
// come a moment after its reply; read it once the clients are done.
func (t *Tap) Counts() TapCounts {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := TapCounts{RoundTrips: t.roundTrips.Load(), Commands: make(map[string]int64, len(t.commands))}
	for key, n := range t.commands {
		out.Commands[t.scripts.resolve(key)] += n
	}
	return out
}

// Close stops listening, closes every relayed connection and waits for
// the relays to end.
func (t *Tap) Close() error {
	err := t.ln.Close()
	t.mu.Lock()
	t.closed = true
	for c := range t.conns {
		_ = c.Close()
	}
	t.mu.Unlock()
	t.wg.Wait()
	return err
}

func (t *Tap) accept() {
	defer t.wg.Done()
	for {
		c, err := t.ln.Accept()
		if err != nil {
			return
		}
		t.wg.Add(1)
		go t.relay(c)
	}
}

// track adds connections that Close must close; false once it has.
func (t *Tap) track(conns ...net.Conn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	for _, c := range conns {
		t.conns[c] = struct{}{}
	}
	return true
}

func (t *Tap) untrack(conns ...net.Conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range conns {
		delete(t.conns, c)
	}
}

// relay copies one client connection to Redis and back, counting.
func (t *Tap) relay(client net.Conn) {
	defer t.wg.Done()
	defer client.Close()
	server, err := net.Dial("tcp", t.upstream)
	if err != nil {
		return
	}
	defer server.Close()
	if !t.track(client, server) {
		return
	}
	defer t.untrack(client, server)

	var replied atomic.Bool
	replied.Store(true) // the first request starts a round trip
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(replyWriter{client, &replied}, server)
		_ = client.Close()
	}()
	in := io.TeeReader(requestReader{client, &replied, &t.roundTrips}, server)
	br := bufio.NewReaderSize(in, 64<<10)
	if err := t.count(br); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
		_, _ = io.Copy(io.Discard, br) // unparsable: relay the rest uncounted
	}
	_ = server.Close()
	<-done
}

// requestReader reads a client's requests and counts a round trip when
// data arrives after a reply, before it is relayed, so no reply to it can
// have been seen yet.
type requestReader struct {
	r       io.Reader
	replied *atomic.Bool
	trips   *atomic.Int64
}

func (q requestReader) Read(p []byte) (int, error) {
	n, err := q.r.Read(p)
	if n > 0 && q.replied.Swap(false) {
		q.trips.Add(1)
	}
	return n, err
}

// replyWriter relays Redis's replies to the client, marking that a reply
// was seen before the client can act on it.
type replyWriter struct {
	w       io.Writer
	replied *atomic.Bool
}

func (r replyWriter) Write(p []byte) (int, error) {
	r.replied.Store(true)
	return r.w.Write(p)
}

// count reads requests until the connection ends, counting each.
func (t *Tap) count(r *bufio.Reader) error {
	for {
		args, err := readRequest(r, 3)
		if err != nil {
			return err
		}
		if len(args) == 0 {
			continue
		}
		name := t.scripts.label(args)
		t.mu.Lock()
		t.commands[name]++
		t.mu.Unlock()
	}
}

// maxKeptArg bounds an argument the tap keeps (a script's source).
const maxKeptArg = 1 << 20

// readRequest reads one request in RESP (an array of bulk strings) or the
// inline form, keeping its first keep arguments and skipping the rest.
func readRequest(r *bufio.Reader, keep int) ([]string, error) {
	line, err := readLine(r)
	if err != nil {
		return nil, err
	}
	if len(line) == 0 || line[0] != '*' {
		f := strings.Fields(string(line))
		return f[:min(keep, len(f))], nil
	}
	n, err := strconv.Atoi(string(line[1:]))
	if err != nil {
		return nil, fmt.Errorf("tap: bad array header %q", line)
	}
	args := make([]string, 0, min(n, keep))
	for i := 0; i < n; i++ {
		arg, err := readBulk(r, i < keep)
		if err != nil {
			return nil, err
		}
		if i < keep {
			args = append(args, arg)
		}
	}
	return args, nil
}

// readBulk reads one bulk string, returning it when keep is set.
func readBulk(r *bufio.Reader, keep bool) (string, error) {
	line, err := readLine(r)
	if err != nil {
		return "", err
	}
	if len(line) == 0 || line[0] != '$' {
		return "", fmt.Errorf("tap: bad bulk header %q", line)
	}
	size, err := strconv.Atoi(string(line[1:]))
	if err != nil || size < 0 {
		return "", fmt.Errorf("tap: bad bulk length %q", line)
	}
	if !keep || size > maxKeptArg {
		_, err := r.Discard(size + 2)
		return "", err
	}
	buf := make([]byte, size+2)
	if _, err := io.ReadFull(r, buf); err != nil {
		return "", err
	}
	return string(buf[:size]), nil
}

func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	return bytes.TrimRight(line, "\r\n"), nil
}

// scriptNames names the scripts the processes run, learnt from their
// sources as they are sent (EVAL, SCRIPT LOAD), shared by the taps of
// one benchmark so that a script one process loaded is named in all.
type scriptNames struct {
	mu     sync.Mutex
	bySHA  map[string]string
	byName map[string]string // name -> sha, to tell two scripts of one name apart
}

func newScriptNames() *scriptNames {
	return &scriptNames{bySHA: map[string]string{}, byName: map[string]string{}}
}

// subcommands are the commands whose first argument is counted with them,
// as Redis's commandstats does ("client|setinfo").
var subcommands = map[string]bool{"client": true, "script": true, "config": true, "cluster": true,
	"command": true, "memory": true, "object": true, "latency": true, "slowlog": true, "function": true}

// shaMark separates a script call from its SHA1 in a label, until
// resolve names the script.
const shaMark = "\x00"

// label is the name a request is counted under: the command, with its
// subcommand where it has one; a script call, by EVALSHA or EVAL alike,
// is "script" and the script's SHA1, which resolve turns into its name
// once the script's source may have been seen.
func (s *scriptNames) label(args []string) string {
	cmd := strings.ToLower(args[0])
	switch {
	case (cmd == "evalsha" || cmd == "evalsha_ro") && len(args) > 1:
		return "script" + shaMark + strings.ToLower(args[1])
	case (cmd == "eval" || cmd == "eval_ro") && len(args) > 1:
		return "script" + shaMark + s.learn(args[1])
	case cmd == "script" && len(args) > 2 && strings.EqualFold(args[1], "load"):
		s.learn(args[2])
		return "script|load"
	case subcommands[cmd] && len(args) > 1:
		return cmd + "|" + strings.ToLower(args[1])
	}
	return cmd
}

// learn names a script from its source and returns its SHA1.
func (s *scriptNames) learn(src string) string {
	sum := sha1.Sum([]byte(src))
	sha := hex.EncodeToString(sum[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.bySHA[sha]; ok {
		return sha
	}
	name := scriptName(src)
	if name == "" {
		name = "sha:" + sha[:8]
	}
	if other, taken := s.byName[name]; taken && other != sha {
		name += " #" + sha[:6]
	}
	s.bySHA[sha], s.byName[name] = name, sha
	return sha
}

// resolve turns the label of a script call into "script NAME", or
// "script sha:1234abcd" when the script's source was never seen; other
// labels are returned as they are.
func (s *scriptNames) resolve(label string) string {
	cmd, sha, ok := strings.Cut(label, shaMark)
	if !ok {
		return label
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if n, ok := s.bySHA[sha]; ok {
		return cmd + " " + n
	}
	return cmd + " sha:" + sha[:min(8, len(sha))]
}
