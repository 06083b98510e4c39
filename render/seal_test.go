package render

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/crawler-dev/crawler/internal/testenv"
)

// TestRender_NoConnectionsOfItsOwn: a page that opens a WebSocket to a
// loopback listener and gathers ICE candidates from a STUN server on a
// loopback UDP listener reaches neither, although its job may reach
// loopback addresses (the browser's proxy to nowhere got the WebSocket);
// its fetch() of the site, sent by the crawler, is answered; and the
// rendering completes once the socket closed and ICE gathering ended.
func TestRender_NoConnectionsOfItsOwn(t *testing.T) {
	noConnectionsOfItsOwn(t)
}

// TestRender_NoConnectionsOfItsOwn_flagsAlone: the browser's flags keep
// the WebSocket and the STUN packets in without the script that hides
// WebRTC from the page.
func TestRender_NoConnectionsOfItsOwn_flagsAlone(t *testing.T) {
	was := noRTC
	noRTC = "void 0"
	t.Cleanup(func() { noRTC = was })
	noConnectionsOfItsOwn(t)
}

func noConnectionsOfItsOwn(t *testing.T) {
	s := newSite(t)
	l := testenv.NewSinks(t)
	r := newRenderer(t)
	body := fmt.Sprintf(`<html><body><div id="api"></div><script>
const out = [];
let left = 3; // the WebSocket's end, the end of ICE gathering, the fetch's answer
function note(s) { out.push(s); }
function finished() {
  if (--left > 0) return;
  const d = document.createElement("div"); d.id = "done"; d.textContent = out.join("; "); document.body.appendChild(d);
}
try {
  const ws = new WebSocket("ws://%[1]s/socket");
  ws.onopen = () => note("ws open");
  ws.onerror = () => note("ws error");
  ws.onclose = finished;
} catch (e) { note("ws throws " + e.name); finished(); }
try {
  const pc = new RTCPeerConnection({iceServers: [{urls: "stun:%[2]s"}]});
  pc.createDataChannel("x");
  pc.onicecandidate = e => { if (e.candidate) note("candidate " + e.candidate.candidate); else finished(); };
  pc.createOffer().then(o => pc.setLocalDescription(o)).catch(e => { note("rtc " + e.name); finished(); });
} catch (e) { note("rtc throws " + e.name); finished(); }
fetch("/api/product.json").then(r => r.json())
  .then(p => { document.getElementById("api").textContent = p.title; }, e => note("fetch " + e)).finally(finished);
</script></body></html>`, l.TCP.Addr(), l.UDP.LocalAddr())
	p := Page{URL: s.URL + "/page", Status: 200, Body: []byte(body), Rendering: rendering("#done"), AllowPrivate: true}
	res, err := r.Render(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	html := string(res.HTML)
	_, noted, _ := strings.Cut(html, `<div id="done">`)
	noted, _, _ = strings.Cut(noted, "</div>")
	t.Logf("the page noted: %s", noted)
	if n := l.Conns(); n != 0 {
		t.Errorf("the WebSocket's listener got %d connections from the browser", n)
	}
	if n := l.Packets(); n != 0 {
		t.Errorf("the STUN listener got %d packets from the browser", n)
	}
	if !strings.Contains(html, `<div id="api">Rendered lamp</div>`) {
		t.Errorf("the page's fetch() of its site was not answered:\n%s", html)
	}
	if !s.asked("/api/product.json") || res.Requests != 1 {
		t.Errorf("the crawler sent %d of the page's requests, want its fetch() (the site saw %v)", res.Requests, s.paths)
	}
	if strings.Contains(noted, "ws open") || strings.Contains(noted, "candidate") {
		t.Errorf("the page saw its WebSocket open or an ICE candidate: %s", noted)
	}
	if r.sealed() == 0 {
		t.Error("the browser's proxy to nowhere was never asked: the WebSocket went elsewhere")
	}
}

// sealed is how many connections the running browser's proxy to nowhere
// refused.
func (r *Renderer) sealed() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == nil {
		return 0
	}
	return r.cur.nowhere.refused.Load()
}
