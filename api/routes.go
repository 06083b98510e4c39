package api

import (
	_ "embed"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// openAPI is the OpenAPI 3 document of every route.
//
//go:embed openapi.json
var openAPI []byte

// endpoint is one method of a route: whether it writes, and its handler.
type endpoint struct {
	write bool
	serve http.HandlerFunc
}

// route is one path of the API and its methods.
type route struct {
	path    string // a ServeMux pattern without method
	methods map[string]endpoint
}

// table lists every route the API serves; the OpenAPI document lists the
// same (a test holds them together).
func (a *API) table() []route {
	read := func(h http.HandlerFunc) endpoint { return endpoint{serve: h} }
	write := func(h http.HandlerFunc) endpoint { return endpoint{write: true, serve: h} }
	return []route{
		{"/api/v1/openapi.json", map[string]endpoint{http.MethodGet: read(serveOpenAPI)}},
		{"/api/v1/jobs", map[string]endpoint{http.MethodGet: read(a.listJobs), http.MethodPost: write(a.submitJob)}},
		{"/api/v1/jobs/{name}", map[string]endpoint{http.MethodGet: read(a.onJob(a.jobStatus)), http.MethodDelete: write(a.onJob(a.resetJob))}},
		{"/api/v1/jobs/{name}/cancel", map[string]endpoint{http.MethodPost: write(a.onJob(a.cancelJob))}},
		{"/api/v1/jobs/{name}/pause", map[string]endpoint{http.MethodPost: write(a.onJob(a.pauseJob))}},
		{"/api/v1/jobs/{name}/resume", map[string]endpoint{http.MethodPost: write(a.onJob(a.resumeJob))}},
		{"/api/v1/jobs/{name}/retry-failed", map[string]endpoint{http.MethodPost: write(a.onJob(a.retryFailed))}},
		{"/api/v1/jobs/{name}/items", map[string]endpoint{http.MethodGet: read(a.jobItems)}},
	}
}

// routes builds the mux: every route behind the auth check, anything else
// a JSON 404.
func (a *API) routes() *http.ServeMux {
	mux := http.NewServeMux()
	for _, rt := range a.table() {
		mux.HandleFunc(rt.path, a.dispatch(rt))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no API route "+r.URL.Path+" (see "+Prefix+"openapi.json)")
	})
	return mux
}

// dispatch picks the route's endpoint by method (405 for another), checks
// the caller may call it and serves it.
func (a *API) dispatch(rt route) http.HandlerFunc {
	allowed := slices.Sorted(maps.Keys(rt.methods))
	return func(w http.ResponseWriter, r *http.Request) {
		ep, ok := rt.methods[r.Method]
		if !ok {
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			writeError(w, http.StatusMethodNotAllowed, r.Method+" is not allowed on "+r.URL.Path+"; allowed: "+strings.Join(allowed, ", "))
			return
		}
		if !a.authorize(w, r, ep.write) {
			return
		}
		ep.serve(w, r)
	}
}

func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(openAPI)
}
