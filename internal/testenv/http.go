package testenv

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Get fetches u and returns its body, an error for any status but 200: a
// plain fetch function for tests of code that takes one (the sitemap
// walker's, a crawl of the demo shop).
func Get(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: status %d", u, resp.StatusCode)
	}
	return io.ReadAll(resp.Body)
}

// Call sends a request with body, and a bearer token unless token is
// empty, and returns the reply's status, header and body; it fails the
// test when the request cannot be made or read (the API's tests).
func Call(t testing.TB, method, url, token, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}
