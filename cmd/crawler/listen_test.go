package main

import (
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/internal/testenv"
)

// TestListen_barePortIsLoopback (issue 11): --http :PORT, --metrics :PORT
// and --listen :PORT answer on 127.0.0.1 and on no other interface of the
// host; every interface must be asked for with 0.0.0.0:PORT.
func TestListen_barePortIsLoopback(t *testing.T) {
	t.Parallel()
	_, keys := testenv.Redis(t)
	hport, mport, dport := freePort(t), freePort(t), freePort(t)
	start(t, "master", "master", "--redis", testenv.RedisURL(), "--prefix", keys.Prefix,
		"--output", filepath.Join(t.TempDir(), "failed.jsonl"), "--http", ":"+hport, "--metrics", ":"+mport)
	start(t, "demo", "demo", "--serve-only", "--listen", ":"+dport)
	other := otherAddress(t)
	for what, url := range map[string]string{"--http": "/api/status", "--metrics": "/metrics", "--listen": "/list/1"} {
		port := map[string]string{"--http": hport, "--metrics": mport, "--listen": dport}[what]
		testenv.Eventually(t, time.Minute, what+" answering on 127.0.0.1:"+port, func() bool {
			resp, err := http.Get("http://127.0.0.1:" + port + url)
			if err == nil {
				resp.Body.Close()
			}
			return err == nil && resp.StatusCode == http.StatusOK
		})
		if other == "" {
			continue
		}
		if c, err := net.DialTimeout("tcp", net.JoinHostPort(other, port), 2*time.Second); err == nil {
			c.Close()
			t.Errorf("%s :%s answers on %s too: a bare port must mean loopback only", what, port, other)
		}
	}
}

// otherAddress is an IPv4 address of this host other than loopback, or
// "" when it has none (the test then checks loopback only).
func otherAddress(t *testing.T) string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && ipn.IP.To4() != nil {
			return ipn.IP.String()
		}
	}
	t.Log("no address of this host but loopback: only loopback is checked")
	return ""
}
