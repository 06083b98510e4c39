package downloader

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/crawler-dev/crawler/fetch"
)

// ErrBanPage marks an answer that holds one of its job's ban_text: a ban
// or captcha page, not the page asked for. It comes wrapped in a
// *fetch.Error with the answer's status, transient: through a proxy, the
// proxy is banned for the host and the page tried through another; direct,
// the page is retried with backoff. It is never stored.
var ErrBanPage = errors.New("ban page")

// banTexts returns the job's ban texts in lower case, for matching without
// regard to case.
func banTexts(texts []string) [][]byte {
	out := make([][]byte, len(texts))
	for i, t := range texts {
		out[i] = bytes.ToLower([]byte(t))
	}
	return out
}

// banPage returns an error wrapping ErrBanPage when page, fetched for
// rawURL, holds one of the job's ban texts, and nil otherwise.
func (j *Job) banPage(rawURL string, page *fetch.Page) error {
	if len(j.banText) == 0 || page == nil || !page.HTML {
		return nil
	}
	body := bytes.ToLower(page.Body)
	for i, t := range j.banText {
		if bytes.Contains(body, t) {
			return &fetch.Error{URL: rawURL, Status: page.Status, Transient: true, Tries: 1,
				Err: fmt.Errorf("%w: the answer holds %q (ban_text)", ErrBanPage, j.Spec.BanText[i])}
		}
	}
	return nil
}
