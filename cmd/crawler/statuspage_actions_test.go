package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/crawler-dev/crawler/internal/demosite"
	"github.com/crawler-dev/crawler/internal/testenv"
	"github.com/crawler-dev/crawler/statuspage/browsertest"
)

// TestStatusPage_browserActs (issue 32): the status page of a real
// master (--http, --api-tokens) acts on jobs in headless Chromium. Without
// a token it offers nothing; with a read token a submission is refused;
// with the write token, kept in the tab's sessionStorage and no cookie, a
// job submitted through the page's form is paused (a "No" at the
// confirmation changes nothing), resumed, its failures retried, and a
// second job cancelled, each after a confirmation, and the page follows.
func TestStatusPage_browserActs(t *testing.T) {
	t.Parallel()
	tab := browsertest.New(t)
	consoleErrors := browsertest.ConsoleErrors(t, tab)
	tokens := filepath.Join(t.TempDir(), "tokens")
	writeTokenFile(t, tokens, "read "+apiRead+"\nwrite "+apiWrite+"\n")
	c := startAPICluster(t, 1, "--api-tokens", tokens)
	site, base := servePauseSite(t, demosite.Options{Details: 40, PerPage: 20, GoneEvery: 20, FlakyEvery: -1}, 10)
	p := &pageDriver{t: t, tab: tab}
	if err := chromedp.Do(tab, chromedp.Navigate(strings.TrimSuffix(c.base, "api/v1/")), chromedp.WaitVisible(`#token-form`)); err != nil {
		t.Fatal(err)
	}
	if p.eval(`document.querySelectorAll('button.act').length`) != "0" || p.eval(`document.getElementById('submit').offsetParent === null`) != "true" {
		t.Error("without a token the page offers actions or the submit form")
	}
	job := demosite.Job{Name: "webjob", Seeds: []string{base + "/list/1"}, PerHostRPS: 1000, PerHostConcurrency: 2, Capacity: 10_000}.YAML()

	p.useToken(apiRead)
	p.submit(job)
	p.waitMessage("a read token refused", "submit: ", "(403)")
	p.do(chromedp.Click(`#token-forget`))
	p.useToken(apiWrite)
	if p.eval(`document.cookie`) != "" || p.eval(`sessionStorage.getItem('crawler.apiToken')`) != apiWrite {
		t.Errorf("the token is not in sessionStorage alone: cookie %q", p.eval(`document.cookie`))
	}
	p.submit(job)
	p.waitMessage("the job submitted", "job webjob submitted")
	testenv.Eventually(t, time.Minute, "two requests held on the wire", func() bool { return site.held.Load() == 2 })

	p.act("webjob", "pause", false)
	if st := c.status(t, "webjob"); st.State != "running" {
		t.Fatalf("a pause answered No changed the job: %s", st.State)
	}
	p.act("webjob", "pause", true)
	p.waitMessage("the pause", "job webjob paused (it was running)")
	p.waitState("webjob", "paused")
	p.act("webjob", "resume", true)
	p.waitState("webjob", "running")
	site.release()
	p.waitState("webjob", "finished")
	p.act("webjob", "retry-failed", true)
	p.waitMessage("the retry", "2 failed pages of job webjob re-enqueued")
	c.waitFinished(t, "webjob")
	browsertest.Screenshot(t, tab, "statuspage-actions.png")

	held, base2 := newPauseSite(t, 30, 0)
	p.submit(demosite.Job{Name: "stopme", Seeds: []string{base2 + "/list/1"}, PerHostRPS: 1000, PerHostConcurrency: 2, Capacity: 10_000}.YAML())
	testenv.Eventually(t, time.Minute, "two requests of stopme held on the wire", func() bool { return held.held.Load() == 2 })
	p.act("stopme", "cancel", true)
	p.waitMessage("the cancel", "cancel of job stopme requested")
	held.release()
	p.waitState("stopme", "cancelled")
	var unexpected []string
	for _, e := range consoleErrors() {
		if !strings.Contains(e, "status of 403") { // the read token's submission, refused
			unexpected = append(unexpected, e)
		}
	}
	if len(unexpected) > 0 {
		t.Errorf("console errors: %q", unexpected)
	}
}

// pageDriver drives the status page in a tab.
type pageDriver struct {
	t   *testing.T
	tab context.Context
}

func (p *pageDriver) do(actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.tab, actions...); err != nil {
		p.t.Fatal(err)
	}
}

// eval evaluates a JavaScript expression and returns it as a string.
func (p *pageDriver) eval(expr string) string {
	p.t.Helper()
	return browsertest.Eval[string](p.t, p.tab, "String("+expr+")")
}

func (p *pageDriver) waitFor(what, cond string) {
	p.t.Helper()
	testenv.Eventually(p.t, 2*time.Minute, "the page showing "+what, func() bool { return p.eval(cond) == "true" })
}

// useToken enters a token in the page's token form.
func (p *pageDriver) useToken(token string) {
	p.t.Helper()
	p.do(chromedp.WaitVisible(`#token`), chromedp.SendKeys(`#token`, token), chromedp.Click(`#token-form button`))
	p.waitFor("the submit form instead of the token form", `document.getElementById('submit').offsetParent !== null && `+
		`document.getElementById('token-form').offsetParent === null`)
}

// submit submits a job file through the page's form.
func (p *pageDriver) submit(jobFile string) {
	p.t.Helper()
	p.do(chromedp.SetValue(`#job-file`, jobFile), chromedp.Click(`#submit-form button`))
}

// waitMessage waits until the page's message holds every part.
func (p *pageDriver) waitMessage(what string, parts ...string) {
	p.t.Helper()
	cond := "true"
	for _, s := range parts {
		cond += " && document.getElementById('act-msg').textContent.includes(" + js(s) + ")"
	}
	p.waitFor(what, cond)
}

// act clicks action in job's row and answers its confirmation.
func (p *pageDriver) act(job, action string, yes bool) {
	p.t.Helper()
	btn := `#jobs tr[data-job="` + job + `"] button[data-action="` + action + `"]`
	p.waitFor(action+" offered for "+job, `!!document.querySelector(`+js(btn)+`)`)
	shown := `!document.getElementById('confirm').hidden && document.getElementById('confirm-text').textContent === ` +
		js(action+" job "+job+"?")
	// The table is drawn again at each refresh: a click that lands while
	// the row is replaced opens nothing, so it is made again until the
	// confirmation shows (a click while it shows changes nothing).
	testenv.Eventually(p.t, 2*time.Minute, "the confirmation of "+action, func() bool {
		if p.eval(shown) == "true" {
			return true
		}
		p.do(chromedp.Click(btn))
		return p.eval(shown) == "true"
	})
	answer := `#confirm-no`
	if yes {
		answer = `#confirm-yes`
	}
	p.do(chromedp.Click(answer))
	p.waitFor("the confirmation gone", `document.getElementById('confirm').hidden`)
}

// waitState waits until job's row shows label.
func (p *pageDriver) waitState(job, label string) {
	p.t.Helper()
	p.waitFor(job+" "+label, `document.querySelector('#jobs tr[data-job="`+job+`"] .state')?.textContent === `+js(label))
}

// js quotes s as a JavaScript string.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
