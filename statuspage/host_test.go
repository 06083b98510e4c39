package statuspage

import (
	"net/http"
	"testing"
)

// TestHandler_hostCheck (issue 18, item 15): the page answers only Host
// headers naming it (an IP address, localhost, the listen address or a
// configured name), so a page of another site whose name is rebound to
// 127.0.0.1 (DNS rebinding) cannot read /api/status.
func TestHandler_hostCheck(t *testing.T) {
	f := newFixture(t)
	busyCluster(f)
	srv := f.serve(f.source(nil), func(o *Options) { o.AllowedHosts = []string{"crawler.example.com"} })
	for host, want := range map[string]int{
		srv.Addr():                     http.StatusOK,
		"localhost:8090":               http.StatusOK,
		"[::1]:8090":                   http.StatusOK,
		"crawler.example.com":          http.StatusOK,
		"CRAWLER.example.com.:8090":    http.StatusOK,
		"attacker.example":             http.StatusMisdirectedRequest,
		"attacker.example:8090":        http.StatusMisdirectedRequest,
		"crawler.example.com.evil.net": http.StatusMisdirectedRequest,
	} {
		for _, path := range []string{"api/status", ""} {
			req, err := http.NewRequest(http.MethodGet, srv.URL()+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = host
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("GET /%s with Host %q: %d, want %d", path, host, resp.StatusCode, want)
			}
		}
	}
}
