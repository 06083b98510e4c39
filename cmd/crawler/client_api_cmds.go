package main

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/store"
)

// overAPI runs do when the command was given --api; done reports whether
// it did (or the flags were wrong), and err is then the command's result.
func (f *apiFlags) overAPI(cmd *cobra.Command, do func(*apiCaller) error) (done bool, err error) {
	ac, err := f.caller(cmd)
	if err != nil {
		return true, err
	}
	if ac == nil {
		return false, nil
	}
	return true, do(ac)
}

// submitOverAPI validates the job file here, as submit does, and posts it.
func submitOverAPI(cmd *cobra.Command, ac *apiCaller, jobFile string, force bool, priority *int) error {
	spec, err := readJobFile(jobFile)
	if err != nil {
		return err
	}
	if priority != nil {
		if err := spec.SetPriority("--priority", *priority); err != nil {
			return err
		}
	}
	body, err := os.ReadFile(jobFile)
	if err != nil {
		return fmt.Errorf("--job: %w", err)
	}
	query := url.Values{}
	if force {
		query.Set("force", "true")
	}
	if priority != nil {
		query.Set("priority", strconv.Itoa(*priority))
	}
	path := "jobs"
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	var reply struct {
		Name string `json:"name"`
	}
	if err := ac.call(cmd.Context(), http.MethodPost, path, body, &reply); err != nil {
		return err
	}
	fmt.Fprintln(cmd.OutOrStdout(), reply.Name)
	return nil
}

func jobsOverAPI(cmd *cobra.Command, ac *apiCaller, asJSON bool) error {
	var jobs []*client.Status
	if err := ac.call(cmd.Context(), http.MethodGet, "jobs", nil, &jobs); err != nil {
		return err
	}
	if asJSON {
		return printJSONLines(cmd.OutOrStdout(), jobs)
	}
	return printJobs(cmd.OutOrStdout(), jobs)
}

func cancelOverAPI(cmd *cobra.Command, ac *apiCaller, job string) error {
	if job == "" {
		return errNoJob
	}
	var reply struct {
		Finished bool `json:"finished"`
	}
	if err := ac.call(cmd.Context(), http.MethodPost, "jobs/"+url.PathEscape(job)+"/cancel", nil, &reply); err != nil {
		return err
	}
	printCancelled(cmd, job, reply.Finished)
	return nil
}

// pauseOverAPI posts a pause or a resume (action) and says what it did.
func pauseOverAPI(cmd *cobra.Command, ac *apiCaller, job, action string) error {
	if job == "" {
		return errNoJob
	}
	var reply struct {
		State string `json:"state"`
	}
	if err := ac.call(cmd.Context(), http.MethodPost, "jobs/"+url.PathEscape(job)+"/"+action, nil, &reply); err != nil {
		return err
	}
	printPaused(cmd, job, action, reply.State)
	return nil
}

func resetOverAPI(cmd *cobra.Command, ac *apiCaller, job string) error {
	var reply struct {
		KeysRemoved int `json:"keys_removed"`
	}
	path := "jobs/" + url.PathEscape(job) + "?confirm=" + url.QueryEscape(job)
	if err := ac.call(cmd.Context(), http.MethodDelete, path, nil, &reply); err != nil {
		return err
	}
	printReset(cmd, job, reply.KeysRemoved)
	return nil
}

func retryOverAPI(cmd *cobra.Command, ac *apiCaller, job string) error {
	if job == "" {
		return errNoJob
	}
	var reply struct {
		Retried    int            `json:"retried"`
		NotRetried map[string]int `json:"not_retried"`
	}
	if err := ac.call(cmd.Context(), http.MethodPost, "jobs/"+url.PathEscape(job)+"/retry-failed", nil, &reply); err != nil {
		return err
	}
	printRetried(cmd, job, reply.Retried, reply.NotRetried)
	return nil
}

// resultsOverAPI writes the job's items, read from the API, as results
// writes them from MongoDB.
func resultsOverAPI(cmd *cobra.Command, ac *apiCaller, job, out string, format store.Format) error {
	return writeExport(cmd, job, out, func(w io.Writer) (int, error) {
		return ac.items(cmd.Context(), job, format.String(), w)
	})
}
