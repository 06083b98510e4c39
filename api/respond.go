package api

import (
	"encoding/json"
	"net/http"
)

// errorReply is the body of every error.
type errorReply struct {
	Error string `json:"error"`
}

// writeJSON writes v as the JSON body of a reply of status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status, body = http.StatusInternalServerError, []byte(`{"error":"encode the reply"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// writeError writes {"error": msg} with status.
func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, errorReply{Error: msg})
}

// startedWriter remembers whether anything was written, so a stream that
// fails before its first byte can still answer with an error.
type startedWriter struct {
	http.ResponseWriter
	started bool
}

func (s *startedWriter) Write(p []byte) (int, error) {
	s.started = true
	return s.ResponseWriter.Write(p)
}
