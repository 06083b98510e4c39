package notify

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/crawler-dev/crawler/fetch"
)

// sendTo sends a test event to target with opts.
func sendTo(t *testing.T, opts Options, target string) (int, error) {
	t.Helper()
	ev := Event{ID: "news-1-1", Event: "finished", Job: "news", State: "finished", Round: 1}
	body, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return NewSender(opts, loadTestSecret(t)).Send(context.Background(), target, ev, body)
}

// TestSender_retries: a receiver that fails twice gets the event on the
// third request, signed so that it verifies, with the event's headers.
func TestSender_retries(t *testing.T) {
	r := newReceiver(t, 2)
	tries, err := sendTo(t, fastOptions(), r.URL+"/hook?token=abc")
	if err != nil || tries != 3 {
		t.Fatalf("Send = %d tries, %v; want 3, nil", tries, err)
	}
	got, requests := r.received()
	if len(got) != 1 || requests != 3 {
		t.Fatalf("received %d events in %d requests, want 1 in 3", len(got), requests)
	}
	h := got[0].header
	if err := Verify([]byte(testSecret), h.Get(TimestampHeader), h.Get(SignatureHeader), got[0].body, time.Now(), time.Minute); err != nil {
		t.Errorf("signature: %v", err)
	}
	if h.Get(EventHeader) != "finished" || h.Get(IDHeader) != "news-1-1" || h.Get("Content-Type") != "application/json" {
		t.Errorf("headers = %v", h)
	}
}

// TestSender_bounded: a receiver that always fails gets Options.Tries
// requests; one that refuses (404) or redirects gets one; the error
// never shows the URL's path or query.
func TestSender_bounded(t *testing.T) {
	always := newReceiver(t, -1)
	opts := fastOptions()
	opts.Tries = 4
	tries, err := sendTo(t, opts, always.URL+"/secret-path?token=abc")
	if err == nil || tries != 4 {
		t.Fatalf("Send to a failing receiver = %d tries, %v; want 4 and an error", tries, err)
	}
	if _, requests := always.received(); requests != 4 {
		t.Errorf("the receiver got %d requests, want 4", requests)
	}
	if strings.Contains(err.Error(), "secret-path") || strings.Contains(err.Error(), "token") {
		t.Errorf("error %q shows the URL", err)
	}
	for name, h := range map[string]http.HandlerFunc{
		"404":      func(w http.ResponseWriter, _ *http.Request) { http.NotFound(w, nil) },
		"redirect": func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/elsewhere", http.StatusFound) },
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(h)
			defer srv.Close()
			if tries, err := sendTo(t, opts, srv.URL+"/hook"); err == nil || tries != 1 {
				t.Errorf("Send = %d tries, %v; want 1 and an error", tries, err)
			}
		})
	}
}

// TestSender_guard: without AllowPrivateNetworks a loopback receiver is
// never connected to, by address or by a name that resolves to it.
func TestSender_guard(t *testing.T) {
	r := newReceiver(t, 0)
	opts := fastOptions()
	opts.AllowPrivateNetworks = false
	port := r.URL[strings.LastIndex(r.URL, ":"):]
	for _, target := range []string{r.URL + "/hook", "http://localhost" + port + "/hook"} {
		tries, err := sendTo(t, opts, target)
		if !errors.Is(err, fetch.ErrBlockedAddress) || tries != 1 {
			t.Errorf("Send to %s = %d tries, %v; want 1 and ErrBlockedAddress", target, tries, err)
		}
	}
	if _, requests := r.received(); requests != 0 {
		t.Errorf("the guarded receiver got %d requests", requests)
	}
}
