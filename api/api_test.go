package api

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/internal/demosite"
	"github.com/crawler-dev/crawler/internal/testenv"
)

// serveAPI serves the API over a real Redis on a loopback httptest
// server, with tokens when the file text is given.
func serveAPI(t *testing.T, tokensText string) string {
	t.Helper()
	rdb, keys := testenv.Redis(t)
	cl, err := client.New(rdb, client.Options{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	deps := Deps{Client: cl}
	if tokensText != "" {
		if deps.Tokens, err = LoadTokens(writeTokens(t, tokensText)); err != nil {
			t.Fatal(err)
		}
	}
	opts := DefaultOptions()
	opts.MaxFailures = 3
	a, err := New(deps, opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	return srv.URL
}

// call sends a request and returns its status and body.
func call(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	status, _, b := testenv.Call(t, method, url, token, body)
	return status, b
}

// wantError checks a reply is status with a JSON error containing want.
func wantError(t *testing.T, status int, body string, wantStatus int, want string) {
	t.Helper()
	var e errorReply
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error == "" {
		t.Errorf("reply %d %q is not a JSON error: %v", status, body, err)
	}
	if status != wantStatus || !strings.Contains(e.Error, want) {
		t.Errorf("reply %d %q, want %d with an error containing %q", status, body, wantStatus, want)
	}
}

// TestAPI_refusesBadInput: each bad request gets its status and a JSON
// error that names the problem.
func TestAPI_refusesBadInput(t *testing.T) {
	base := serveAPI(t, "read "+readToken+"\nwrite "+writeToken+"\n")
	job := demosite.JobYAML("good", "http://127.0.0.1:1")
	huge := "name: huge\nseeds: [http://127.0.0.1:1/]\n# " + strings.Repeat("x", 11<<20) + "\n"
	for name, c := range map[string]struct {
		method, path, token, body string
		status                    int
		want                      string
	}{
		"body over 10 MiB":   {"POST", "/api/v1/jobs", writeToken, huge, 413, "larger than"},
		"invalid YAML":       {"POST", "/api/v1/jobs", writeToken, "name: [unclosed\n", 400, "job: "},
		"unknown field":      {"POST", "/api/v1/jobs", writeToken, job + "colour: red\n", 400, "colour"},
		"empty body":         {"POST", "/api/v1/jobs", writeToken, "", 400, "empty"},
		"bad name in file":   {"POST", "/api/v1/jobs", writeToken, strings.Replace(job, "name: good", "name: ../etc", 1), 400, "must be 1-64 characters"},
		"name with ../":      {"GET", "/api/v1/jobs/..%2Fetc", readToken, "", 400, "must be 1-64 characters"},
		"upper-case name":    {"POST", "/api/v1/jobs/News/cancel", writeToken, "", 400, "must be 1-64 characters"},
		"bad force":          {"POST", "/api/v1/jobs?force=maybe", writeToken, job, 400, "not true or false"},
		"bad priority":       {"POST", "/api/v1/jobs?priority=high", writeToken, job, 400, "?priority=\"high\" is not an integer"},
		"priority too high":  {"POST", "/api/v1/jobs?priority=101", writeToken, job, 400, "?priority=: 101 is not between -100 and 100"},
		"bad format":         {"GET", "/api/v1/jobs/good/items?format=xml", readToken, "", 501, "MongoDB"},
		"wrong method":       {"PUT", "/api/v1/jobs", writeToken, "", 405, "allowed: GET, POST"},
		"unknown route":      {"GET", "/api/v1/nothing", readToken, "", 404, "no API route"},
		"unknown job":        {"GET", "/api/v1/jobs/nosuch", readToken, "", 404, "no such job"},
		"reset unconfirmed":  {"DELETE", "/api/v1/jobs/good", writeToken, "", 400, "?confirm=NAME"},
		"reset misconfirmed": {"DELETE", "/api/v1/jobs/good?confirm=other", writeToken, "", 400, "job good: a reset"},
		"query token":        {"GET", "/api/v1/jobs?token=" + readToken, "", "", 400, "query string"},
		"query token too":    {"GET", "/api/v1/jobs?access_token=" + readToken, readToken, "", 400, "query string"},
		"no token":           {"GET", "/api/v1/jobs", "", "", 401, "missing token"},
		"read on write":      {"POST", "/api/v1/jobs/good/cancel", readToken, "", 403, "needs a write token"},
	} {
		t.Run(name, func(t *testing.T) {
			status, body := call(t, c.method, base+c.path, c.token, c.body)
			wantError(t, status, body, c.status, c.want)
		})
	}
}

// TestAPI_slowsFailedAttempts: after MaxFailures wrong tokens from one
// address even a right one waits, with 429 and Retry-After.
func TestAPI_slowsFailedAttempts(t *testing.T) {
	base := serveAPI(t, "read "+readToken+"\n")
	for range 3 {
		status, body := call(t, "GET", base+"/api/v1/jobs", "wrong-token-0123456789", "")
		wantError(t, status, body, 401, "invalid token")
	}
	req, _ := http.NewRequest("GET", base+"/api/v1/jobs", nil)
	req.Header.Set("Authorization", "Bearer "+readToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
		t.Errorf("after 3 failures: %d, Retry-After %q; want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}

// TestAPI_withoutTokensReadOnly: with no token file reads answer and
// writes are refused, saying how to enable them.
func TestAPI_withoutTokensReadOnly(t *testing.T) {
	base := serveAPI(t, "")
	if status, body := call(t, "GET", base+"/api/v1/jobs", "", ""); status != 200 || strings.TrimSpace(body) != "[]" {
		t.Errorf("GET jobs: %d %q", status, body)
	}
	status, body := call(t, "POST", base+"/api/v1/jobs", "", demosite.JobYAML("good", "http://127.0.0.1:1"))
	wantError(t, status, body, 403, "--api-tokens")
}

// TestOpenAPI_listsEveryRoute: the document and the routes served name
// the same paths and methods.
func TestOpenAPI_listsEveryRoute(t *testing.T) {
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Errorf("openapi %q, want 3.x", doc.OpenAPI)
	}
	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			if method != "parameters" {
				documented[strings.ToUpper(method)+" "+path] = true
			}
		}
	}
	served := map[string]bool{}
	for _, rt := range (&API{}).table() {
		for method := range rt.methods {
			served[method+" "+rt.path] = true
		}
	}
	for _, r := range slices.Sorted(maps.Keys(served)) {
		if !documented[r] {
			t.Errorf("%s is served but not in openapi.json", r)
		}
	}
	for _, r := range slices.Sorted(maps.Keys(documented)) {
		if !served[r] {
			t.Errorf("%s is in openapi.json but not served", r)
		}
	}
}
