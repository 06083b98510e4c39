package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/crawler-dev/crawler/fetch"
)

// userAgent is sent with every webhook request.
const userAgent = "crawler-webhook/1.0"

// maxAnswerBytes is how much of a receiver's answer is read (and thrown
// away) so that the connection can be used again.
const maxAnswerBytes = 64 << 10

// Sender POSTs events to webhooks: signed, through the address guard,
// retried with backoff. It is safe for concurrent use.
type Sender struct {
	opts   Options
	secret *Secret
	http   *http.Client
}

// NewSender returns a Sender with opts' guard, tries and backoff.
func NewSender(opts Options, secret *Secret) *Sender {
	dialer := &net.Dialer{Timeout: opts.Timeout, KeepAlive: 30 * time.Second,
		Control: fetch.DialControl(opts.AllowPrivateNetworks)}
	transport := &http.Transport{Proxy: nil, DialContext: dialer.DialContext, MaxIdleConnsPerHost: 4,
		IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: opts.Timeout}
	return &Sender{opts: opts, secret: secret, http: &http.Client{Transport: transport,
		// a redirect is not followed: a POST that moves is the operator's to fix
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// Send POSTs body, the JSON of ev, to target until it answers 2xx, it
// answers what another try will not change (a 4xx but 408, 425 and 429; a
// redirect), the address guard refuses it, or Options.Tries or
// MaxElapsed run out. It returns how many requests it sent and the last
// error. Errors never hold the URL, which may carry a receiver's token.
func (s *Sender) Send(ctx context.Context, target string, ev Event, body []byte) (int, error) {
	tries := 0
	op := func() (struct{}, error) {
		tries++
		return struct{}{}, s.post(ctx, target, ev, body)
	}
	b := backoff.NewExponentialBackOff()
	b.InitialInterval, b.MaxInterval = s.opts.FirstBackoff, s.opts.MaxBackoff
	_, err := backoff.Retry(ctx, op, backoff.WithBackOff(b), backoff.WithMaxTries(uint(s.opts.Tries)),
		backoff.WithMaxElapsedTime(s.opts.MaxElapsed))
	return tries, err
}

// post sends one request: signed now, so each try carries a fresh
// timestamp.
func (s *Sender) post(ctx context.Context, target string, ev Event, body []byte) error {
	rctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return backoff.Permanent(fmt.Errorf("build request: %w", unwrapURL(err)))
	}
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set(TimestampHeader, ts)
	req.Header.Set(SignatureHeader, Sign(s.secret.bytes(), ts, body))
	req.Header.Set(EventHeader, ev.Event)
	req.Header.Set(IDHeader, ev.ID)
	resp, err := s.http.Do(req)
	if err != nil {
		err = unwrapURL(err)
		if errors.Is(err, fetch.ErrBlockedAddress) {
			return backoff.Permanent(err)
		}
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswerBytes))
	return answerError(resp, s.opts.MaxBackoff)
}

// answerError is nil for a 2xx answer, else why the request failed:
// permanent unless another try may help (408, 425, 429, 5xx); a 429 or
// 503 with Retry-After waits that long (maxWait at most).
func answerError(resp *http.Response, maxWait time.Duration) error {
	code := resp.StatusCode
	err := fmt.Errorf("answered %s", resp.Status)
	switch {
	case code >= 200 && code < 300:
		return nil
	case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
		if secs, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil && secs >= 0 {
			secs = min(secs, int(maxWait/time.Second))
			return fmt.Errorf("%w (%w)", err, backoff.RetryAfter(secs))
		}
		return err
	case code == http.StatusRequestTimeout || code == http.StatusTooEarly || code >= 500:
		return err
	case code >= 300 && code < 400:
		return backoff.Permanent(fmt.Errorf("%w: redirects are not followed; give the webhook's final URL", err))
	}
	return backoff.Permanent(err)
}

// unwrapURL drops the *url.Error around a client error: its text holds
// the URL, whose path or query may be a receiver's token.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}
