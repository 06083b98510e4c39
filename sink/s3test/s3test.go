// Package s3test runs an S3-protocol server (gofakes3, objects in memory)
// on a loopback port, for the tests and benchmarks of the s3:// sink. It
// can be stopped and started again on the same port with its objects
// kept, as an S3 endpoint that goes away for a while and comes back; it
// counts the multipart uploads it completed.
package s3test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Server is an in-process S3 endpoint on 127.0.0.1.
type Server struct {
	backend   *s3mem.Backend
	handler   http.Handler
	addr      string
	multipart atomic.Int64

	mu  sync.Mutex
	srv *http.Server // nil while stopped
}

// Start serves S3 on a free loopback port with the given buckets.
func Start(buckets ...string) (*Server, error) {
	b := s3mem.New()
	for _, name := range buckets {
		if err := b.CreateBucket(name); err != nil {
			return nil, fmt.Errorf("s3test: create bucket %s: %w", name, err)
		}
	}
	s := &Server{backend: b}
	fake := gofakes3.New(b).Server()
	s.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Query().Has("uploadId") {
			s.multipart.Add(1)
		}
		if err := unchunkPart(r); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fake.ServeHTTP(w, r)
	})
	if err := s.listen("127.0.0.1:0"); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Server) listen(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("s3test: listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: s.handler}
	s.mu.Lock()
	s.srv, s.addr = srv, l.Addr().String()
	s.mu.Unlock()
	go func() { _ = srv.Serve(l) }()
	return nil
}

// streamingPayload marks a body sent in signed chunks (aws-chunked), as
// minio-go sends over plain HTTP.
const streamingPayload = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"

// unchunkPart decodes the signed chunks of a multipart upload's part:
// gofakes3 decodes them for a PUT of a whole object, not for a part.
func unchunkPart(r *http.Request) error {
	if r.Method != http.MethodPut || !r.URL.Query().Has("partNumber") || r.Header.Get("X-Amz-Content-Sha256") != streamingPayload {
		return nil
	}
	br := bufio.NewReader(r.Body)
	var body bytes.Buffer
	for {
		head, err := br.ReadString('\n')
		if err != nil {
			return fmt.Errorf("s3test: read a chunk's head: %w", err)
		}
		sizeHex, _, _ := strings.Cut(strings.TrimSpace(head), ";")
		n, err := strconv.ParseInt(sizeHex, 16, 64)
		if err != nil {
			return fmt.Errorf("s3test: chunk head %q: %w", head, err)
		}
		if _, err := io.CopyN(&body, br, n+2); err != nil { // the data and its CRLF
			return fmt.Errorf("s3test: read a chunk: %w", err)
		}
		body.Truncate(body.Len() - 2)
		if n == 0 {
			break
		}
	}
	r.Body, r.ContentLength = io.NopCloser(&body), int64(body.Len())
	r.Header.Set("Content-Length", strconv.Itoa(body.Len()))
	r.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	return nil
}

// Endpoint is the server's address for ?endpoint=: http://127.0.0.1:PORT.
func (s *Server) Endpoint() string { return "http://" + s.addr }

// Stop closes the listener and every connection: the endpoint refuses
// connections until Restart.
func (s *Server) Stop() error {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	return srv.Close()
}

// Restart serves again on the same port, with the objects it held.
func (s *Server) Restart() error { return s.listen(s.addr) }

// Close stops the server for good.
func (s *Server) Close() { _ = s.Stop() }

// MultipartUploads is how many multipart uploads were completed.
func (s *Server) MultipartUploads() int64 { return s.multipart.Load() }

// Objects returns the contents of every object of bucket under prefix,
// by key.
func (s *Server) Objects(bucket, prefix string) (map[string][]byte, error) {
	p := gofakes3.NewPrefix(&prefix, nil)
	list, err := s.backend.ListBucket(bucket, &p, gofakes3.ListBucketPage{})
	if err != nil {
		return nil, fmt.Errorf("s3test: list %s/%s: %w", bucket, prefix, err)
	}
	out := map[string][]byte{}
	for _, c := range list.Contents {
		obj, err := s.backend.GetObject(bucket, c.Key, nil)
		if err != nil {
			return nil, fmt.Errorf("s3test: get %s/%s: %w", bucket, c.Key, err)
		}
		body, err := io.ReadAll(obj.Contents)
		_ = obj.Contents.Close()
		if err != nil {
			return nil, fmt.Errorf("s3test: read %s/%s: %w", bucket, c.Key, err)
		}
		out[c.Key] = body
	}
	return out, nil
}

// Lines returns the lines of every object of bucket under prefix, the
// objects in key order.
func (s *Server) Lines(bucket, prefix string) ([]string, error) {
	objs, err := s.Objects(bucket, prefix)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(objs))
	for k := range objs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var lines []string
	for _, k := range keys {
		body := string(objs[k])
		if !strings.HasSuffix(body, "\n") {
			return nil, errors.New("s3test: object " + k + " does not end in a newline")
		}
		lines = append(lines, strings.Split(strings.TrimSuffix(body, "\n"), "\n")...)
	}
	return lines, nil
}
