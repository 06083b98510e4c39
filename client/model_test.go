package client

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/testenv"
)

// TestSubmit_modelNotCrawled: a job with page kinds, seeds of a kind or
// sitemaps is refused at submit, naming the field, until the masters and
// slaves walk them; nothing of it reaches Redis.
func TestSubmit_modelNotCrawled(t *testing.T) {
	rdb, keys := testenv.Redis(t)
	short := "detail_link: {css: a}\nfields: {title: {css: h1}}\n"
	for field, yaml := range map[string]string{
		"kinds": `seeds: ["https://a.example/"]
kinds:
  start: {links: [{css: "a", kind: product}]}
  product: {item: true, fields: {title: {css: h1}}}
`,
		"seeds":    `seeds: [{url: "https://a.example/", kind: detail}]` + "\n" + short,
		"sitemaps": `seeds: ["https://a.example/"]` + "\nsitemaps: [{url: robots, kind: detail}]\n" + short,
	} {
		spec, err := cluster.ParseJobSpec(strings.NewReader("name: m-" + field + "\n" + yaml))
		if err != nil {
			t.Fatalf("%s: %v", field, err)
		}
		err = Submit(context.Background(), rdb, keys, spec)
		if !errors.Is(err, ErrModelNotCrawled) || !strings.Contains(err.Error(), "job: "+field+":") {
			t.Errorf("%s: Submit = %v, want ErrModelNotCrawled naming %s", field, err, field)
		}
		if n, _ := rdb.Exists(context.Background(), keys.Job(spec.Name).Spec()).Result(); n != 0 {
			t.Errorf("%s: the refused job's spec is in Redis", field)
		}
	}
}
