package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/api"
	"github.com/crawler-dev/crawler/client"
)

// apiFlags are --api and --token-file: a client command that drives the
// cluster through a master's HTTP API instead of Redis (and MongoDB).
type apiFlags struct {
	url       string
	tokenFile string
}

func (f *apiFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.url, "api", "", "drive the cluster through a master's HTTP API at this URL (its --http address, e.g. http://10.0.0.1:8090) instead of --redis and --mongo")
	fl.StringVar(&f.tokenFile, "token-file", "", "with --api: a file holding the API token (its first line)")
}

// caller returns the API caller the flags name, nil without --api. Giving
// --api with --redis or --mongo is an error: which cluster is meant would
// be a guess.
func (f *apiFlags) caller(cmd *cobra.Command) (*apiCaller, error) {
	if f.url == "" {
		if f.tokenFile != "" {
			return nil, errors.New("--token-file: goes with --api")
		}
		return nil, nil
	}
	for _, other := range []string{"redis", "mongo", "prefix", "max-slaves"} {
		if fl := cmd.Flags().Lookup(other); fl != nil && fl.Changed {
			return nil, fmt.Errorf("--api: give --api or --%s, not both", other)
		}
	}
	u, err := url.Parse(f.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--api: %q is not an http(s) URL such as http://127.0.0.1:8090", f.url)
	}
	c := &apiCaller{base: strings.TrimSuffix(u.String(), "/") + api.Prefix}
	if f.tokenFile != "" {
		data, err := os.ReadFile(f.tokenFile)
		if err != nil {
			return nil, fmt.Errorf("--token-file: %w", err)
		}
		first, _, _ := strings.Cut(string(data), "\n")
		if c.token = strings.TrimSpace(first); c.token == "" {
			return nil, fmt.Errorf("--token-file: %s holds no token on its first line", f.tokenFile)
		}
	}
	return c, nil
}

// apiCaller calls a master's HTTP API.
type apiCaller struct {
	base  string // http://host:port/api/v1/
	token string
}

// do sends a request to path under the API and returns the response of a
// 2xx status; any other is an error with the API's message.
func (c *apiCaller) do(ctx context.Context, method, path string, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("--api: %w", err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("--api: %w", err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	var e struct {
		Error string `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&e); err != nil || e.Error == "" {
		e.Error = resp.Status
	}
	return nil, &apiError{call: method + " " + c.base + path, msg: e.Error, status: resp.StatusCode}
}

// apiError is an API call answered with an error status.
type apiError struct {
	call   string // method and URL
	msg    string // the API's message
	status int
}

func (e *apiError) Error() string { return fmt.Sprintf("%s: %s (%d)", e.call, e.msg, e.status) }

// Unwrap tells a follower (client.Follow) which answers asking again
// will not mend: a job not found, and any other refusal of the call
// (400, 401, 403, 409 ...), but not 429 or a server away (5xx).
func (e *apiError) Unwrap() error {
	switch {
	case e.status == http.StatusNotFound:
		return client.ErrJobNotFound
	case e.status/100 == 4 && e.status != http.StatusTooManyRequests:
		return client.ErrRefused
	}
	return nil
}

// call sends a request and decodes its JSON reply into out.
func (c *apiCaller) call(ctx context.Context, method, path string, body []byte, out any) error {
	resp, err := c.do(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: decode the reply: %w", method, c.base+path, err)
	}
	return nil
}

// items copies the job's items in format to w and returns how many the
// API says it sent; a stream that ends without that count was cut.
func (c *apiCaller) items(ctx context.Context, job, format string, w io.Writer) (int, error) {
	resp, err := c.do(ctx, http.MethodGet, "jobs/"+url.PathEscape(job)+"/items?format="+format, nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil {
		return 0, fmt.Errorf("--api: items of %s: %w", job, err)
	}
	n, err := strconv.Atoi(resp.Trailer.Get(api.ItemsTrailer))
	if err != nil {
		return 0, fmt.Errorf("--api: the items of %s were cut short", job)
	}
	return n, nil
}

// status reads a job's status.
func (c *apiCaller) status(ctx context.Context, job string) (*client.Status, error) {
	var st client.Status
	return &st, c.call(ctx, http.MethodGet, "jobs/"+url.PathEscape(job), nil, &st)
}
