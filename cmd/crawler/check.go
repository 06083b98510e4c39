package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/downloader"
	"github.com/crawler-dev/crawler/extract"
	"github.com/crawler-dev/crawler/fetch"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/render"
)

// checkOptions are the flags of crawler check.
type checkOptions struct {
	job, url, kind string
	json           bool
	render         *renderFlags // the browser, for a kind that says render
}

func newCheckCmd(a *app) *cobra.Command {
	o := checkOptions{render: &a.render}
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Fetch one page and show what a job would take from it: its kind, every rule's links, the fields",
		Long: `check fetches one page with the job's request settings (user agent, headers,
timeout, size limit, allow_private_networks; directly, without proxies or
robots.txt; rendered in headless Chromium when the kind says render) and runs the rules of the page's kind on it: the links each rule
finds and the kind they lead to, every field's value, the values that do not
convert to their type, and the required fields that are missing.

The page's kind is --kind when given; else the kind of the seed it is; else
the kind that the link rules whose allow pattern matches the URL lead to,
when they all lead to one; else the kind of the first rule that finds the
page on the way from the seeds (breadth-first, at most 50 pages read).
Otherwise give --kind. The reason is printed beside the kind.

It exits non-zero when the page cannot be fetched or read, or when a
required field is missing.`,
		Example: `  crawler check --job shop.yaml --url https://shop.example/p/1
  crawler check --job shop.yaml --url https://shop.example/c/phones --kind category
  crawler check --job shop.yaml --url https://shop.example/p/1 --json | jq .fields`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCheck(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.job, "job", "", "job file (YAML)")
	f.StringVar(&o.url, "url", "", "the page to fetch")
	f.StringVar(&o.kind, "kind", "", "the page's kind (default: decided from the seeds and the link rules' allow patterns)")
	f.BoolVar(&o.json, "json", false, "print one JSON object")
	a.render.register(cmd)
	return cmd
}

// checkReport is what crawler check found on one page.
type checkReport struct {
	URL         string               `json:"url"`
	FinalURL    string               `json:"final_url,omitempty"`
	Status      int                  `json:"status"`
	ContentType string               `json:"content_type"`
	Bytes       int                  `json:"bytes"`
	Kind        string               `json:"kind"`
	KindReason  string               `json:"kind_reason"`
	Item        bool                 `json:"item"`
	Rendered    bool                 `json:"rendered,omitempty"`
	Notes       []string             `json:"notes,omitempty"`
	Rules       []checkRule          `json:"rules"`
	Invalid     int                  `json:"invalid_links"`
	Filtered    int                  `json:"filtered_links"`
	Fields      map[string]any       `json:"fields,omitempty"`
	FieldErrors []extract.FieldError `json:"field_errors,omitempty"`
	Missing     []string             `json:"missing,omitempty"`
	Empty       []string             `json:"empty,omitempty"`
	Work        int64                `json:"work"`
	rules       []jobspec.LinkRule   // the kind's link rules, for the text form
	fieldNames  []string             // in order, for the text form
}

// checkRule is one link rule's links on the page.
type checkRule struct {
	Rule  string   `json:"rule"`
	Kind  string   `json:"kind"`
	Found int      `json:"found"`
	Links []string `json:"links"`
}

func runCheck(ctx context.Context, o checkOptions, out io.Writer) error {
	if o.url == "" {
		return errors.New("--url: the page to check is required")
	}
	spec, err := readJobFile(o.job)
	if err != nil {
		return err
	}
	rules, err := extract.CompileJob(spec)
	if err != nil {
		return fmt.Errorf("%s: %w", o.job, err)
	}
	rep := &checkReport{URL: o.url}
	rep.Kind, rep.KindReason, err = pageKind(spec, o.url, o.kind)
	if errors.Is(err, errKindUnknown) {
		rep.Kind, rep.KindReason, err = walkKind(ctx, spec, rules, o.url)
	}
	if err != nil {
		return err
	}
	kind := rules.Kind(rep.Kind)
	page, err := checkFetch(ctx, spec, o.url, kind.JSON)
	if err != nil {
		return fetchContext(o.url, err)
	}
	rep.fill(page, spec)
	if err := rep.render(ctx, o.render, spec, page); err != nil {
		return err
	}
	res, err := kind.Extract(ctx, page.URL, page.Body)
	if err != nil {
		return fmt.Errorf("extract %s as %s: %w", o.url, rep.Kind, err)
	}
	rep.add(kind, res)
	if o.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		rep.print(out)
	}
	if len(rep.Missing) > 0 {
		return fmt.Errorf("the page lacks required field(s) %s: a crawl would fail it as %s",
			strings.Join(rep.Missing, ", "), extract.FailureMissingField)
	}
	return nil
}

func sortedKinds(kinds map[string]jobspec.PageKind) []string {
	names := make([]string, 0, len(kinds))
	for n := range kinds {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// checkFetch fetches the page with the job's request settings, tried as
// a crawl tries it (the downloader's retry policy, max_retries times).
func checkFetch(ctx context.Context, spec *jobspec.Job, pageURL string, jsonPage bool) (*fetch.Page, error) {
	f := fetch.New(fetch.Options{})
	defer f.CloseIdleConnections()
	return downloader.FetchPage(ctx, f, fetch.Request{
		URL: pageURL, AllowPrivate: spec.AllowPrivateNetworks,
		UserAgent: spec.UserAgent, Headers: spec.Headers, MaxBodyBytes: spec.MaxBodyBytes,
		Timeout: spec.Timeout.Std(), AllowNonHTML: jsonPage,
	}, spec.MaxRetries, downloader.DefaultOptions())
}

// fetchContext names the page in a failed fetch's error, unless the
// error is a *fetch.Error, which names it already.
func fetchContext(pageURL string, err error) error {
	var fe *fetch.Error
	if errors.As(err, &fe) {
		return err
	}
	return fmt.Errorf("fetch %s: %w", pageURL, err)
}

// fill records what the fetch gave, and notes what a crawl would do
// otherwise than check.
func (r *checkReport) fill(page *fetch.Page, spec *jobspec.Job) {
	r.Status, r.ContentType, r.Bytes = page.Status, page.ContentType, len(page.Body)
	if page.URL != r.URL {
		r.FinalURL = page.URL
	}
	if u, err := url.Parse(page.URL); err == nil && !spec.AllowsHost(u.Hostname()) {
		r.Notes = append(r.Notes, fmt.Sprintf("%s is not in allowed_domains: a crawl would not fetch it", u.Hostname()))
	}
}

// add records the extraction's result.
func (r *checkReport) add(kind *extract.Kind, res *extract.Result) {
	r.Item, r.Work = kind.Item, res.Work
	r.rules, r.fieldNames = kind.LinkRules(), kind.FieldNames()
	for i, l := range r.rules {
		cr := checkRule{Rule: ruleString(l), Kind: l.Kind, Found: res.Found[i], Links: []string{}}
		for _, link := range res.Links {
			if link.Rule == i {
				cr.Links = append(cr.Links, link.URL)
			}
		}
		r.Rules = append(r.Rules, cr)
	}
	r.Invalid, r.Filtered = res.Invalid, res.Filtered
	r.Fields, r.FieldErrors, r.Missing, r.Empty = res.Fields, res.FieldErrors, res.Missing, res.Empty
}

// ruleString writes a link rule as a job file would.
func ruleString(l jobspec.LinkRule) string {
	var parts []string
	for _, kv := range [][2]string{{"css", l.CSS}, {"xpath", l.XPath}, {"json", l.JSON}, {"attr", l.Attr},
		{"allow", l.Allow}, {"deny", l.Deny}} {
		if kv[1] != "" {
			parts = append(parts, fmt.Sprintf("%s: %q", kv[0], kv[1]))
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// print writes the report for a person.
func (r *checkReport) print(w io.Writer) {
	fmt.Fprintf(w, "page    %s\n", r.URL)
	if r.FinalURL != "" {
		fmt.Fprintf(w, "        redirected to %s\n", r.FinalURL)
	}
	fmt.Fprintf(w, "        %d, %s, %d bytes\n", r.Status, r.ContentType, r.Bytes)
	fmt.Fprintf(w, "kind    %s (%s)\n", r.Kind, r.KindReason)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note    %s\n", n)
	}
	for i, cr := range r.Rules {
		fmt.Fprintf(w, "links   [%d] %s -> %s: %d found, %d kept\n", i, cr.Rule, cr.Kind, cr.Found, len(cr.Links))
		for _, l := range cr.Links {
			fmt.Fprintf(w, "          %s\n", l)
		}
	}
	if len(r.Rules) == 0 {
		fmt.Fprintln(w, "links   (the kind has no link rules)")
	}
	if r.Invalid+r.Filtered > 0 {
		fmt.Fprintf(w, "        %d not http(s) URLs, %d left out by allow/deny\n", r.Invalid, r.Filtered)
	}
	r.printFields(w)
	fmt.Fprintf(w, "work    %d units\n", r.Work)
}

// printFields writes an item kind's fields, their errors and what is
// missing.
func (r *checkReport) printFields(w io.Writer) {
	if !r.Item {
		fmt.Fprintln(w, "fields  (not an item kind: its pages are walked, not stored)")
		return
	}
	width := 0
	for _, n := range r.fieldNames {
		width = max(width, len(n))
	}
	for i, n := range r.fieldNames {
		label := "fields "
		if i > 0 {
			label = "       "
		}
		b, _ := json.Marshal(r.Fields[n])
		note := ""
		if slices.Contains(r.Empty, n) {
			note = "   (selects nothing)"
		}
		fmt.Fprintf(w, "%s %-*s %s%s\n", label, width, n, b, note)
	}
	for _, fe := range r.FieldErrors {
		fmt.Fprintf(w, "error   %s: %s\n", fe.Field, fe.Reason)
	}
	for _, m := range r.Missing {
		fmt.Fprintf(w, "missing %s (required)\n", m)
	}
}

// render loads the page in headless Chromium when its kind says render,
// and puts the DOM in place of the body; its requests are sent directly
// by the renderer (never by the browser), like check's fetch, through the
// address guard and the kind's block list.
func (r *checkReport) render(ctx context.Context, rf *renderFlags, spec *jobspec.Job, page *fetch.Page) error {
	rendering, ok := spec.RenderOf(r.Kind)
	if !ok || rf == nil || !page.HTML {
		return nil
	}
	rr, err := rf.get(nil, nil)
	if err != nil {
		return err
	}
	defer rf.close()
	res, err := rr.Render(ctx, render.Page{URL: page.URL, Status: page.Status, ContentType: page.ContentType, Body: page.Body,
		Rendering: rendering, AllowPrivate: spec.AllowPrivateNetworks, UserAgent: spec.UserAgent, Headers: spec.Headers})
	if err != nil {
		return fmt.Errorf("render %s: %w", r.URL, err)
	}
	page.Body, r.Rendered = res.HTML, true
	r.Notes = append(r.Notes, fmt.Sprintf("rendered in %s: %d requests sent, %d blocked (block), %d refused (address guard)",
		res.Took.Round(time.Millisecond), res.Requests, len(res.Blocked), len(res.Refused)))
	if res.Unsettled {
		r.Notes = append(r.Notes, "the page's requests never stopped for 500ms: it was read as it stood near its render_timeout (a wait_for says when it is ready)")
	}
	return nil
}
