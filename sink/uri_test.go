package sink

import (
	"context"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		uri, want string
	}{
		{"", "empty URI"},
		{"items.jsonl", "no scheme"},
		{"/var/items", "no scheme"},
		{"ftp://host/x", `unknown scheme "ftp"; known: kafka://, postgres://, postgresql://, s3://, warc:`},
		{"postgres://u:hunter2@host:99999x/db", "malformed URI"},
		{"warc:", "no directory"},
		{"kafka://b1:9092,b2:9092", "write kafka://HOST:PORT"},
		{"kafka://,b2/items", "an empty broker"},
		{"kafka://b1/items?acks=1", `unknown option "acks"`},
		{"warc:dir?max_size=lots", "not a size"},
		{"warc:dir?size=1GiB", `unknown option "size"`},
	} {
		t.Run(tc.uri, func(t *testing.T) {
			_, err := Parse(tc.uri)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse(%q) = %v, want an error saying %q", tc.uri, err, tc.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("the error shows the password: %v", err)
			}
		})
	}
	s, err := Parse("postgresql://u:hunter2@127.0.0.1/db?table=crawl")
	if err != nil {
		t.Fatal(err)
	}
	if s.Scheme != "postgres" || s.String() != "postgresql://u:xxxxx@127.0.0.1/db?table=crawl" {
		t.Fatalf("Parse = %q named %q", s.Scheme, s.String())
	}
}

// TestOpen_credentialsHidden: a sink that cannot connect says where it
// tried, never with the password.
func TestOpen_credentialsHidden(t *testing.T) {
	for _, uri := range []string{
		"postgres://crawler:hunter2@127.0.0.1:1/db?connect_timeout=2", // nothing listens on port 1
		"postgres://crawler:hunter2@127.0.0.1/db?table=Bad-Name",
	} {
		_, _, err := Open(context.Background(), uri, nil)
		if err == nil {
			t.Fatalf("Open(%s) worked", uri)
		}
		if strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "crawler:xxxxx@127.0.0.1") {
			t.Fatalf("Open: %v (want the URI with its password hidden)", err)
		}
	}
}
