package robots

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// httpGetter returns a Getter that sends one GET through client with the
// given User-Agent and does not follow redirects (the Cache does, counting
// them). It reads at most MaxBodyBytes of a body. The client's transport is
// where an address guard and proxies belong.
func httpGetter(client *http.Client, userAgent string) Getter {
	noFollow := *client
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return func(ctx context.Context, url string) (Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return Response{}, fmt.Errorf("get %s: %w", url, err)
		}
		req.Header.Set("User-Agent", userAgent)
		resp, err := noFollow.Do(req)
		if err != nil {
			return Response{}, fmt.Errorf("get %s: %w", url, err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBodyBytes))
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			return Response{}, fmt.Errorf("get %s: read body: %w", url, err)
		}
		return Response{Status: resp.StatusCode, Body: body, Location: resp.Header.Get("Location")}, nil
	}
}
