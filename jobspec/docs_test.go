package jobspec

import (
	"bufio"
	"errors"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// jobFileDoc is the job file's reference, checked here so that it cannot
// drift from the parser.
const jobFileDoc = "../docs/job-file.md"

// docsMinimalJob is the job the fragments of the reference are checked on
// top of: a fragment's top-level keys replace this job's keys.
const docsMinimalJob = `name: news
seeds: ["https://example.com/list/1"]
detail_link: {css: ".item a"}
fields:
  title: {css: "h1"}
`

// docExample is one fenced yaml block of the reference.
type docExample struct {
	line    int    // the line of its opening fence
	text    string // its content, unindented
	wantErr string // the field named by a "# error: FIELD" line, if any
}

var errorMarkRE = regexp.MustCompile(`^#\s*error:\s*(\S+)\s*$`)

// TestJobFileDoc_Examples parses every yaml example of docs/job-file.md:
// complete job files (they set name) alone, fragments on top of the
// minimal job, and examples marked "# error: FIELD" must be refused with a
// message naming FIELD.
func TestJobFileDoc_Examples(t *testing.T) {
	examples := docExamples(t, readDoc(t))
	if len(examples) < 20 {
		t.Fatalf("found %d yaml examples in %s, want a few per field", len(examples), jobFileDoc)
	}
	var complete, fragments, errs int
	for _, ex := range examples {
		t.Run("line "+strconv.Itoa(ex.line), func(t *testing.T) {
			text, isComplete, err := ex.job()
			if err != nil && ex.wantErr == "" {
				t.Fatalf("example:\n%s\ncannot be read as YAML: %v", ex.text, err)
			}
			if isComplete {
				complete++
			} else {
				fragments++
			}
			spec, err := Parse(strings.NewReader(text))
			switch {
			case ex.wantErr == "" && err != nil:
				t.Errorf("example:\n%s\nchecked as:\n%s\nParseJobSpec: %v", ex.text, text, err)
			case ex.wantErr == "":
			case err == nil:
				t.Errorf("example:\n%s\nis marked as an error of %s, but Parse accepted it: %+v", ex.text, ex.wantErr, spec)
			case !namesField(err, ex.wantErr):
				t.Errorf("example:\n%s\nerror %q does not name %s", ex.text, err, ex.wantErr)
			default:
				errs++
			}
		})
	}
	t.Logf("checked %d complete examples, %d fragments, %d errors", complete, fragments, errs)
	if complete < 3 || fragments < 20 || errs < 15 {
		t.Errorf("checked %d complete examples, %d fragments and %d errors; want at least 3, 20 and 15", complete, fragments, errs)
	}
}

// TestJobFileDoc_CompleteExample checks that the reference's first example
// is configs/job.example.yaml and that it shows every optional setting at
// its default, but for the headers it adds.
func TestJobFileDoc_CompleteExample(t *testing.T) {
	file, err := os.ReadFile("../configs/job.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	examples := docExamples(t, readDoc(t))
	if len(examples) == 0 || examples[0].text != string(file) {
		t.Fatalf("the first yaml example of %s is not configs/job.example.yaml; copy the file into it", jobFileDoc)
	}
	spec, err := Parse(strings.NewReader(string(file)))
	if err != nil {
		t.Fatalf("configs/job.example.yaml: %v", err)
	}
	want := Default()
	want.ApplyDefaults()
	if spec.Dedup != want.Dedup {
		t.Errorf("dedup = %+v, want the defaults %+v", spec.Dedup, want.Dedup)
	}
	if len(spec.Headers) == 0 {
		t.Error("the complete example sets no headers; it should show one")
	}
	got := spec.RequestSpec
	got.Headers = nil
	if !reflect.DeepEqual(got, want.RequestSpec) {
		t.Errorf("request settings = %+v, want the defaults %+v", got, want.RequestSpec)
	}
	if spec.MaxRetries != want.MaxRetries || spec.MaxDepth != want.MaxDepth || spec.RecrawlEvery != want.RecrawlEvery ||
		spec.AllowPrivateNetworks != want.AllowPrivateNetworks {
		t.Errorf("max_retries, max_depth, recrawl_every, allow_private_networks = %d, %d, %s, %v; want the defaults %d, %d, %s, %v",
			spec.MaxRetries, spec.MaxDepth, spec.RecrawlEvery, spec.AllowPrivateNetworks,
			want.MaxRetries, want.MaxDepth, want.RecrawlEvery, want.AllowPrivateNetworks)
	}
	if hosts := seedHosts(spec.Seeds); !reflect.DeepEqual(spec.AllowedDomains, hosts) {
		t.Errorf("allowed_domains = %q, want the default, the seeds' hosts %q", spec.AllowedDomains, hosts)
	}
}

// TestJobFileDoc_EveryField checks that the reference names every field a
// job file may hold: each field of the spec and of dedup has a section (a
// heading naming it), and the keys of link and field rules are named in
// backticks. A new field cannot be added without documenting it.
func TestJobFileDoc_EveryField(t *testing.T) {
	doc := readDoc(t)
	var headings []string
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "#") {
			headings = append(headings, line)
		}
	}
	fields := yamlFields(reflect.TypeFor[Job](), "", true)
	for _, known := range []string{"name", "dedup.error_rate", "per_host_rps", "max_body_bytes", "all"} {
		if _, ok := fields[known]; !ok {
			t.Fatalf("the walk over Job's yaml tags did not find %s; it found %v", known, fields)
		}
	}
	for path, needHeading := range fields {
		name := "`" + path + "`"
		if needHeading && !containsAny(headings, name) {
			t.Errorf("%s has no section: no heading of %s names %s", path, jobFileDoc, name)
		}
		if !strings.Contains(doc, name) {
			t.Errorf("%s does not mention %s", jobFileDoc, name)
		}
	}
}

func readDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(jobFileDoc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// docExamples returns the doc's fenced yaml blocks. A block may be
// indented (inside a list item); its lines lose the fence's indentation.
func docExamples(t *testing.T, doc string) []docExample {
	t.Helper()
	var out []docExample
	var cur *docExample
	var indent string
	sc := bufio.NewScanner(strings.NewReader(doc))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && trimmed == "```yaml":
			cur, indent = &docExample{line: n}, line[:strings.Index(line, "`")]
		case cur == nil && (trimmed == "```yml" || trimmed == "```YAML"):
			t.Errorf("%s:%d: write the fence as ```yaml so the example is checked", jobFileDoc, n)
		case cur != nil && trimmed == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			line = strings.TrimPrefix(line, indent)
			cur.text += line + "\n"
			if m := errorMarkRE.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
				cur.wantErr = m[1]
			}
		}
	}
	if cur != nil {
		t.Fatalf("%s:%d: the yaml block is never closed", jobFileDoc, cur.line)
	}
	return out
}

// job returns the job file the example is checked as: the example itself
// if it is complete (it sets name), else the minimal job with the
// example's keys in place of its own. err says the example is not a YAML
// mapping; the text returned is then the minimal job and the example
// appended.
func (ex docExample) job() (text string, complete bool, err error) {
	var node yaml.Node
	if err := yaml.Unmarshal([]byte(ex.text), &node); err != nil {
		return docsMinimalJob + ex.text, false, err
	}
	if len(node.Content) == 0 || node.Content[0].Kind != yaml.MappingNode {
		return docsMinimalJob + ex.text, false, errNotMapping
	}
	keys := map[string]bool{}
	m := node.Content[0]
	for i := 0; i < len(m.Content); i += 2 {
		keys[m.Content[i].Value] = true
	}
	if keys["name"] {
		return ex.text, true, nil
	}
	return withoutKeys(docsMinimalJob, keys) + ex.text, false, nil
}

var errNotMapping = errors.New("the example is not a mapping of job fields")

// withoutKeys drops the top-level entries of a block-style YAML document
// whose keys are in keys: each runs from its unindented "key:" line to the
// next unindented line.
func withoutKeys(doc string, keys map[string]bool) string {
	var b strings.Builder
	drop := false
	for _, line := range strings.SplitAfter(doc, "\n") {
		if line != "" && line[0] != ' ' {
			key, _, _ := strings.Cut(line, ":")
			drop = keys[key]
		}
		if !drop {
			b.WriteString(line)
		}
	}
	return b.String()
}

// namesField reports whether a job error names field the way the parser
// does: "job: FIELD..." for a bad value, "field FIELD not found" for an
// unknown one.
func namesField(err error, field string) bool {
	msg := err.Error()
	return strings.Contains(msg, "job: "+field)
}

// yamlFields returns the yaml paths of t's fields ("dedup.window"), each
// with whether it must have a section of its own: the fields of t and of
// structs it holds directly do; the keys of rules held through a pointer
// or a map (link and field rules) are named by their path's last part.
func yamlFields(t reflect.Type, prefix string, sections bool) map[string]bool {
	out := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if opts == "inline" {
			for p, s := range yamlFields(f.Type, prefix, sections) {
				out[p] = s
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[prefix+name] = sections
		for p, s := range nestedFields(f.Type, prefix+name, sections) {
			out[p] = s
		}
	}
	return out
}

// nestedFields returns the yaml fields inside a field of type ft.
func nestedFields(ft reflect.Type, path string, sections bool) map[string]bool {
	switch ft.Kind() {
	case reflect.Struct:
		return yamlFields(ft, path+".", sections)
	case reflect.Pointer, reflect.Map, reflect.Slice:
		if e := ft.Elem(); e.Kind() == reflect.Struct {
			return yamlFields(e, "", false)
		}
	}
	return nil
}

func containsAny(lines []string, s string) bool {
	for _, l := range lines {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}
