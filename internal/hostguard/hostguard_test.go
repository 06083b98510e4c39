package hostguard

import (
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
)

// TestHandler: IP addresses, localhost and *.localhost, the listen
// address's host, this machine's name and the allowed names pass, in any
// case and with a trailing dot; any other name is refused with 421 and the
// Refusal text.
func TestHandler(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	h := Handler(ok, Options{Addr: "crawler.internal:8090", Allowed: []string{"Crawler.Example.com"},
		Refusal: func(host string) string { return "not " + host }})
	name, _ := os.Hostname()
	for host, want := range map[string]int{
		"127.0.0.1:8090": 204, "[::1]:8090": 204, "10.1.2.3": 204, "localhost": 204, "app.localhost:1": 204,
		"crawler.internal:8090": 204, "crawler.example.com.": 204, name: 204,
		"attacker.example": 421, "crawler.example.com.evil.net": 421, "localhost.evil.net": 421,
	} {
		req := httptest.NewRequest(http.MethodGet, "/x", nil)
		req.Host = host
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Host %q: %d, want %d", host, rec.Code, want)
		}
		if want == 421 && rec.Body.String() != "not "+normalHost(host)+"\n" {
			t.Errorf("Host %q: body %q", host, rec.Body.String())
		}
	}
}
