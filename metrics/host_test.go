package metrics

import (
	"context"
	"net/http"
	"testing"
)

// TestServe_hostCheck (issue 29, item 6): /metrics and the profiles answer
// only Host headers naming the listener, so a page whose name is rebound
// to 127.0.0.1 cannot read /debug/pprof/cmdline (which held a MongoDB
// URI's password); /healthz answers anyone.
func TestServe_hostCheck(t *testing.T) {
	r := newRegistry(t, DefaultOptions())
	s, err := Serve(context.Background(), "127.0.0.1:0", r, WithProfiles(), WithAllowedHosts("prom.example"))
	if err != nil {
		t.Fatalf("Serve: %v", err)
	}
	defer s.Close()
	for host, want := range map[string]int{
		s.Addr():                  http.StatusOK,
		"localhost:9090":          http.StatusOK,
		"prom.example":            http.StatusOK,
		"rebind.attacker.example": http.StatusMisdirectedRequest,
		"prom.example.evil.net":   http.StatusMisdirectedRequest,
	} {
		for _, path := range []string{"/debug/pprof/cmdline", "/metrics", "/healthz"} {
			req, err := http.NewRequest(http.MethodGet, "http://"+s.Addr()+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = host
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			w := want
			if path == "/healthz" {
				w = http.StatusOK
			}
			if resp.StatusCode != w {
				t.Errorf("GET %s with Host %q: %d, want %d", path, host, resp.StatusCode, w)
			}
		}
	}
}
