package jobspec

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

const renderKindsJob = `name: spa
seeds: ["https://spa.example/"]
render_timeout: 20s
kinds:
  start:
    links: [{css: "a.p", kind: product}]
  product:
    item: true
    render: true
    wait_for: {css: ".price"}
    block: [image]
    fields: {title: {css: h1}}
  plain:
    item: true
    fields: {title: {css: h1}}
`

// TestJobSpec_RenderOf: a kind's settings win over the job's, the job's
// fill what the kind leaves out, and the defaults the rest.
func TestJobSpec_RenderOf(t *testing.T) {
	spec, err := Parse(strings.NewReader(renderKindsJob))
	if err != nil {
		t.Fatal(err)
	}
	got, ok := spec.RenderOf("product")
	want := Rendering{WaitFor: WaitFor{CSS: ".price"}, Timeout: 20 * time.Second, Block: []string{BlockImage}}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("RenderOf(product) = %+v, %v; want %+v, true", got, ok, want)
	}
	for _, kind := range []string{"start", "plain", "nope"} {
		if _, ok := spec.RenderOf(kind); ok {
			t.Errorf("RenderOf(%s) renders; only product says render", kind)
		}
	}
	if !spec.Renders() {
		t.Error("Renders = false with a rendered kind")
	}

	t.Run("whole job, short form", func(t *testing.T) {
		spec, err := Parse(strings.NewReader(minimalJob + "render: true\nwait_for: 2s\n"))
		if err != nil {
			t.Fatal(err)
		}
		for _, kind := range []string{KindStart, KindDetail} {
			got, ok := spec.RenderOf(kind)
			want := Rendering{WaitFor: WaitFor{Delay: Duration(2 * time.Second)}, Timeout: DefaultRenderTimeout.Std(), Block: DefaultBlock}
			if !ok || !reflect.DeepEqual(got, want) {
				t.Errorf("RenderOf(%s) = %+v, %v; want %+v, true", kind, got, ok, want)
			}
		}
	})

	t.Run("survives the stored JSON", func(t *testing.T) {
		spec, err := Parse(strings.NewReader(minimalJob + "render: true\nblock: []\nwait_for: {css: h1}\n"))
		if err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(spec)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := spec.RenderOf(KindDetail)
		b, ok := back.RenderOf(KindDetail)
		if !ok || !reflect.DeepEqual(a, b) || b.Block == nil || len(b.Block) != 0 {
			t.Errorf("after JSON: %+v, %v; before: %+v (block [] must stay empty, not the default)", b, ok, a)
		}
	})
}

// TestJobSpec_RenderErrors: each mistake names its field's path.
func TestJobSpec_RenderErrors(t *testing.T) {
	kindsJob := func(product string) string {
		return "name: spa\nseeds: [\"https://spa.example/\"]\nkinds:\n  start:\n    links: [{css: a, kind: product}]\n" +
			"  product:\n    item: true\n    fields: {title: {css: h1}}\n" + product
	}
	cases := []struct{ name, job, field string }{
		{"timeout too short", kindsJob("    render: true\n    render_timeout: 10ms\n"), "kinds.product.render_timeout"},
		{"bad wait css", kindsJob("    render: true\n    wait_for: {css: \"a[\"}\n"), "kinds.product.wait_for.css"},
		{"bad wait key", kindsJob("    render: true\n    wait_for: {xpath: //a}\n"), "kinds.product.wait_for"},
		{"wait not shorter", kindsJob("    render: true\n    render_timeout: 5s\n    wait_for: 5s\n"), "kinds.product.wait_for"},
		{"block type", kindsJob("    render: true\n    block: [image, video]\n"), "kinds.product.block[1]"},
		{"json kind", strings.Replace(kindsJob(""), "  product:\n", "  api:\n    format: json\n    render: true\n    links: [{json: u, kind: product}]\n  product:\n", 1), "kinds.api.render"},
		{"job timeout", minimalJob + "render: true\nrender_timeout: 1h\n", "render_timeout"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(c.job))
			if err == nil {
				t.Fatalf("accepted:\n%s", c.job)
			}
			if !namesField(err, c.field) {
				t.Errorf("error %q does not name %s", err, c.field)
			}
		})
	}
}

// TestJobSpec_renderWithProxyRequire: a rendered job may require proxies:
// its pages' requests go through the job's fetch path, proxies included.
func TestJobSpec_renderWithProxyRequire(t *testing.T) {
	for _, job := range []string{minimalJob + "render: true\nproxy: require\n", minimalJob + "render: true\nproxy: require\ncookies: true\n"} {
		if _, err := Parse(strings.NewReader(job)); err != nil {
			t.Errorf("refused: %v\n%s", err, job)
		}
	}
}
