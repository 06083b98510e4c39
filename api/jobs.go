package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/dedup"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/store"
)

// submitted is the reply to a submission.
type submitted struct {
	Name string `json:"name"`
}

// submitJob parses the body as a job file, as `client submit` does, and
// submits it.
func (a *API) submitJob(w http.ResponseWriter, r *http.Request) {
	force, err := boolParam(r, "force")
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	spec, err := jobspec.Parse(http.MaxBytesReader(w, r.Body, a.opts.MaxBody))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the job file is larger than %d bytes", a.opts.MaxBody))
		return
	case err != nil:
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if err := priorityParam(r, spec); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), a.opts.Timeout)
	defer cancel()
	if !force {
		msg, err := a.previousRun(ctx, spec)
		if err != nil {
			a.fail(w, err)
			return
		}
		if msg != "" {
			writeError(w, http.StatusConflict, msg)
			return
		}
	}
	err = a.deps.Client.Submit(ctx, spec)
	switch {
	case errors.Is(err, client.ErrJobActive):
		writeError(w, http.StatusConflict, err.Error())
	case errors.Is(err, dedup.ErrNoRoom), errors.Is(err, dedup.ErrInvalidOptions):
		writeError(w, http.StatusBadRequest, err.Error())
	case err != nil:
		a.fail(w, err)
	default:
		writeJSON(w, http.StatusCreated, submitted{Name: spec.Name})
	}
}

// previousRun says why the job is refused, as `client submit` does
// without --force, when a job of its name finished within its dupefilter
// window: submitted again it would fetch only new pages.
func (a *API) previousRun(ctx context.Context, spec *jobspec.Job) (string, error) {
	window := spec.Dedup.Window.Std()
	prev, err := a.deps.Client.PreviousRun(ctx, spec.Name, window)
	if err != nil || prev == nil {
		return "", err
	}
	return fmt.Sprintf("job %s finished at %s and stored %d pages; its dupefilter remembers them for %s, "+
		"so submitted again it would fetch only pages new since then. To crawl everything again: "+
		"DELETE %sjobs/%s?confirm=%s, then submit; to submit anyway: ?force=true",
		spec.Name, prev.FinishedAt, prev.Counters.Stored, window, Prefix, spec.Name, spec.Name), nil
}

// listJobs answers every job's status, as `client jobs --json` prints them
// (one array instead of one object a line).
func (a *API) listJobs(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), a.opts.Timeout)
	defer cancel()
	jobs, err := a.deps.Client.Jobs(ctx)
	if err != nil {
		a.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, jobs)
}

// jobCall answers a call on the path's job: it checks the name, bounds
// the call by Options.Timeout and answers its reply with 200, or its error.
type jobCall func(ctx context.Context, r *http.Request, job string) (any, error)

// onJob serves call as a handler.
func (a *API) onJob(call jobCall) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		job, ok := jobName(w, r)
		if !ok {
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), a.opts.Timeout)
		defer cancel()
		reply, err := call(ctx, r, job)
		if err != nil {
			a.fail(w, err)
			return
		}
		writeJSON(w, http.StatusOK, reply)
	}
}

// jobStatus answers a job's status, as `client status --json` prints it.
func (a *API) jobStatus(ctx context.Context, _ *http.Request, job string) (any, error) {
	return a.deps.Client.Status(ctx, job)
}

// cancelled is the reply to a cancel: Finished when no master had taken
// the job up and it was finished at once.
type cancelled struct {
	Name     string `json:"name"`
	Finished bool   `json:"finished"`
}

// cancelJob cancels a job, as `client cancel` does.
func (a *API) cancelJob(ctx context.Context, _ *http.Request, job string) (any, error) {
	finished, err := a.deps.Client.Cancel(ctx, job)
	return cancelled{Name: job, Finished: finished}, err
}

// paused is the reply to a pause or a resume: the state the job was
// paused in, or went back to.
type paused struct {
	Name  string `json:"name"`
	State string `json:"state"`
}

// pauseJob pauses a job, as `client pause` does.
func (a *API) pauseJob(ctx context.Context, _ *http.Request, job string) (any, error) {
	from, err := a.deps.Client.Pause(ctx, job)
	return paused{Name: job, State: from}, err
}

// resumeJob resumes a paused job, as `client resume` does.
func (a *API) resumeJob(ctx context.Context, _ *http.Request, job string) (any, error) {
	state, err := a.deps.Client.Resume(ctx, job)
	return paused{Name: job, State: state}, err
}

// retried is the reply to retry-failed.
type retried struct {
	Name       string         `json:"name"`
	Retried    int            `json:"retried"`
	NotRetried map[string]int `json:"not_retried"`
}

// retryFailed re-enqueues the job's failed detail pages, as `client
// retry-failed` does.
func (a *API) retryFailed(ctx context.Context, _ *http.Request, job string) (any, error) {
	if a.deps.Items == nil {
		return nil, errNoItems
	}
	failures, err := a.deps.Items.Failures(ctx, job)
	if err != nil {
		return nil, err
	}
	n, err := a.deps.Client.RetryFailed(ctx, job, failures)
	return retried{Name: job, Retried: n, NotRetried: client.NotRetried(job, failures)}, err
}

// reset is the reply to a reset.
type reset struct {
	Name        string `json:"name"`
	KeysRemoved int    `json:"keys_removed"`
}

// errUnconfirmed is a reset without ?confirm=NAME.
var errUnconfirmed = errors.New("a reset forgets the job and its dupefilter: confirm with ?confirm=NAME")

// resetJob forgets a job that is not running, as `client reset` does; the
// caller confirms by naming the job again in ?confirm=.
func (a *API) resetJob(ctx context.Context, r *http.Request, job string) (any, error) {
	if r.URL.Query().Get("confirm") != job {
		return nil, fmt.Errorf("job %s: %w", job, errUnconfirmed)
	}
	n, err := a.deps.Client.Reset(ctx, job)
	return reset{Name: job, KeysRemoved: n}, err
}

// formats are the item formats by their ?format= name, with their type.
var formats = map[string]struct {
	format      store.Format
	contentType string
}{
	"jsonl": {store.FormatJSONL, "application/jsonl"},
	"json":  {store.FormatJSON, "application/json"},
	"csv":   {store.FormatCSV, "text/csv; charset=utf-8"},
}

// jobItems streams a job's items from the store as `client results`
// writes them.
func (a *API) jobItems(w http.ResponseWriter, r *http.Request) {
	job, ok := jobName(w, r)
	if !ok {
		return
	}
	if a.deps.Items == nil {
		a.fail(w, errNoItems)
		return
	}
	name := r.URL.Query().Get("format")
	if name == "" {
		name = "jsonl"
	}
	f, ok := formats[name]
	if !ok {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("format %q is not jsonl, json or csv", name))
		return
	}
	if !a.knownJob(w, r, job) {
		return
	}
	w.Header().Set("Content-Type", f.contentType)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Trailer", ItemsTrailer)
	sw := &startedWriter{ResponseWriter: w}
	n, err := a.deps.Items.ExportItemsAs(r.Context(), job, sw, f.format)
	switch {
	case err != nil && !sw.started:
		a.fail(w, err)
	case err != nil:
		// The status is sent: the client sees a cut stream, and no trailer.
		a.log.Warn("items stream cut", zap.String("job", job), zap.Int("items", n), zap.Error(err))
	default:
		w.Header().Set(ItemsTrailer, strconv.Itoa(n))
	}
}

// ItemsTrailer is the HTTP trailer that ends a complete items stream with
// how many items it held; a stream cut short has none.
const ItemsTrailer = "X-Crawler-Items"

// knownJob answers 404 for a job neither the store nor Redis knows.
func (a *API) knownJob(w http.ResponseWriter, r *http.Request, job string) bool {
	ctx, cancel := context.WithTimeout(r.Context(), a.opts.Timeout)
	defer cancel()
	exists, err := a.deps.Items.JobExists(ctx, job)
	if err == nil && !exists {
		_, err = a.deps.Client.Status(ctx, job)
	}
	if err != nil {
		a.fail(w, err)
		return false
	}
	return true
}

// errNoItems is a call on the items or failures of a cluster that keeps
// them in files.
var errNoItems = errors.New("this master writes JSON Lines files (--output), not MongoDB: " +
	"the items and failures are in the slaves' files (crawler client results --from)")

// fail answers an error: 400 for an unconfirmed reset, 501 without
// MongoDB, 404 for an unknown job, 409 for one in the wrong state, 503 for a Redis or MongoDB that failed (logged).
func (a *API) fail(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, errUnconfirmed):
		writeError(w, http.StatusBadRequest, err.Error())
	case errors.Is(err, errNoItems):
		writeError(w, http.StatusNotImplemented, err.Error())
	case errors.Is(err, client.ErrJobNotFound):
		writeError(w, http.StatusNotFound, err.Error())
	case errors.Is(err, client.ErrJobFinished), errors.Is(err, client.ErrJobBusy), errors.Is(err, client.ErrJobActive),
		errors.Is(err, client.ErrJobCancelling), errors.Is(err, client.ErrJobPaused), errors.Is(err, client.ErrJobNotPaused):
		writeError(w, http.StatusConflict, err.Error())
	default:
		a.log.Warn("api call failed", zap.Error(err))
		writeError(w, http.StatusServiceUnavailable, err.Error())
	}
}

// jobName returns the path's job name, or answers 400 for an invalid one.
func jobName(w http.ResponseWriter, r *http.Request) (string, bool) {
	name := r.PathValue("name")
	if err := jobspec.CheckName(name); err != nil {
		writeError(w, http.StatusBadRequest, "job "+err.Error())
		return "", false
	}
	return name, true
}

// boolParam reads a true/false query parameter; absent is false.
// priorityParam gives spec the priority ?priority= names, when it does
// (as client submit --priority): it replaces the job file's.
func priorityParam(r *http.Request, spec *jobspec.Job) error {
	v := r.URL.Query().Get("priority")
	if v == "" {
		return nil
	}
	p, err := strconv.Atoi(v)
	if err != nil {
		return fmt.Errorf("?priority=%q is not an integer", v)
	}
	return spec.SetPriority("?priority=", p)
}

func boolParam(r *http.Request, name string) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("?%s=%q is not true or false", name, v)
	}
	return b, nil
}
