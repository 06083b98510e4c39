package testenv

import (
	"net"
	"sync/atomic"
	"testing"
)

// Sinks are a TCP and a UDP listener on loopback that count what reaches
// them and answer nothing: the addresses a test gives a page (a
// WebSocket's server, a STUN server) to show that nothing was sent there.
type Sinks struct {
	// TCP accepts connections and closes them; UDP reads packets.
	TCP     net.Listener
	UDP     net.PacketConn
	conns   atomic.Int64
	packets atomic.Int64
}

// NewSinks opens the listeners, closed when the test ends.
func NewSinks(t testing.TB) *Sinks {
	t.Helper()
	s := &Sinks{}
	var err error
	if s.TCP, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	if s.UDP, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.TCP.Close(); _ = s.UDP.Close() })
	go s.accept()
	go s.read()
	return s
}

func (s *Sinks) accept() {
	for {
		c, err := s.TCP.Accept()
		if err != nil {
			return
		}
		s.conns.Add(1)
		_ = c.Close()
	}
}

func (s *Sinks) read() {
	buf := make([]byte, 2048)
	for {
		if _, _, err := s.UDP.ReadFrom(buf); err != nil {
			return
		}
		s.packets.Add(1)
	}
}

// Conns is how many connections the TCP listener accepted.
func (s *Sinks) Conns() int64 { return s.conns.Load() }

// Packets is how many packets the UDP listener read.
func (s *Sinks) Packets() int64 { return s.packets.Load() }
