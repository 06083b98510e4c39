package testenv

import (
	"context"
	"fmt"
	"io"
	"net/http"
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
