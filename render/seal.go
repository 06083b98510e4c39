package render

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/chromedp"
	"go.uber.org/zap"
)

// The browser never opens a network connection of its own. The requests
// the Fetch domain pauses are answered by the crawler (the interceptor):
// the document from the caller's fetch, every other http(s) request from
// Page.Fetch or the renderer's own fetcher. What the Fetch domain does not
// pause (WebSockets, WebRTC, a request of a worker or of a frame in
// another process, the browser's own background traffic) would go to the
// network past the address guard, robots.txt, the host's budget and the
// job's proxy choice; the flags below send all of it to nowhere:
//
//   - every connection goes through a proxy that is a loopback listener of
//     this process refusing every connection it gets (loopback included:
//     <-loopback> removes Chromium's implicit bypass for it), so anything
//     not answered by the interceptor fails;
//   - host names resolve to nothing but the proxy's address, so nothing
//     leaks through DNS either;
//   - WebRTC may not send UDP but through the proxy, which takes none
//     (so no STUN packet leaves), and the page's scripts find no
//     RTCPeerConnection (noRTC).
func sealFlags(proxy string) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ProxyServer("http://" + proxy),
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
		chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("dns-prefetch-disable", true),
	}
}

// noRTC runs in every frame before its scripts: a page finds no WebRTC.
// It is the second line behind sealFlags, which refuse its packets
// anyway.
var noRTC = `(() => {
  for (const name of ["RTCPeerConnection", "webkitRTCPeerConnection", "RTCDataChannel", "RTCIceCandidate",
                      "RTCSessionDescription", "RTCRtpSender", "RTCRtpReceiver", "RTCRtpTransceiver"]) {
    try { delete globalThis[name]; } catch (e) {}
  }
})();`

// nowhere is a loopback listener that closes every connection it takes:
// the browser's proxy, so that a connection the browser opens itself
// reaches no one.
type nowhere struct {
	ln       net.Listener
	log      *zap.Logger
	refused  atomic.Int64
	closeOne sync.Once
}

func listenNowhere(log *zap.Logger) (*nowhere, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the browser's proxy: %w", err)
	}
	n := &nowhere{ln: ln, log: log}
	go n.refuse()
	return n, nil
}

func (n *nowhere) refuse() {
	for {
		c, err := n.ln.Accept()
		if err != nil {
			return
		}
		n.refused.Add(1)
		go n.drop(c)
	}
}

// drop closes c once it said what it wanted (logged at debug: Chromium's
// own background requests, a page's WebSocket), or after a second.
func (n *nowhere) drop(c net.Conn) {
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(time.Second))
	b := make([]byte, 512)
	k, _ := c.Read(b)
	line, _, _ := strings.Cut(string(b[:k]), "\r\n")
	n.log.Debug("the browser tried to reach the network itself; refused", zap.String("request", line))
}

func (n *nowhere) addr() string { return n.ln.Addr().String() }

func (n *nowhere) close() { n.closeOne.Do(func() { _ = n.ln.Close() }) }
