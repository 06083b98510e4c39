package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"
)

// repoRoot is where docker-compose.yml, the Dockerfile and go.mod live,
// seen from this package's directory.
const repoRoot = "../.."

// composeFile is the part of docker-compose.yml these tests read.
type composeFile struct {
	Services map[string]composeService `yaml:"services"`
}

// composeService is one service; Command must be a list (exec form), so
// every argument is one YAML item and no shell splitting is guessed at.
type composeService struct {
	Build       any               `yaml:"build"`
	Image       string            `yaml:"image"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []string          `yaml:"volumes"`
}

func readCompose(t *testing.T) composeFile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var cf composeFile
	if err := yaml.Unmarshal(data, &cf); err != nil {
		t.Fatalf("docker-compose.yml (every command must be a list of strings): %v", err)
	}
	return cf
}

// crawlerServices are the services that run the image built from the
// Dockerfile, by name.
func (cf composeFile) crawlerServices() map[string]composeService {
	out := map[string]composeService{}
	for name, s := range cf.Services {
		if s.Build != nil {
			out[name] = s
		}
	}
	return out
}

// parseCrawlerArgs does what the binary does with args up to running the
// command: find the subcommand, parse its flags (type-checking each
// value) and check its positional arguments. It returns the subcommand
// with its flags set.
func parseCrawlerArgs(args []string) (*cobra.Command, error) {
	root := newRootCmd()
	cmd, rest, err := root.Find(args)
	if err != nil {
		return nil, err
	}
	if cmd == root || !cmd.Runnable() {
		return nil, fmt.Errorf("%q names no runnable subcommand", args)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return nil, fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		return nil, fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	return cmd, nil
}

func TestParseCrawlerArgs_RejectsWhatTheBinaryRejects(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{},
		{"nosuch"},
		{"client"},
		{"master", "--no-such-flag", "x"},
		{"slave", "--id", "zero"},
		{"client", "submit", "--concurrency", "3"}, // a slave flag, not submit's
		{"version", "extra"},
	} {
		if _, err := parseCrawlerArgs(args); err == nil {
			t.Errorf("parseCrawlerArgs(%q) accepted it", args)
		}
	}
	cmd, err := parseCrawlerArgs([]string{"client", "submit", "--log-level", "debug", "--job", "j.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if job, _ := cmd.Flags().GetString("job"); cmd.CommandPath() != "crawler client submit" || job != "j.yaml" {
		t.Errorf("got %s --job %q", cmd.CommandPath(), job)
	}
}

// TestCompose_Flags checks every crawler command docker-compose.yml runs,
// and every `docker compose run` its comments tell users to type, against
// the binary's own command tree.
func TestCompose_Flags(t *testing.T) {
	t.Parallel()
	cf := readCompose(t)
	crawlers := cf.crawlerServices()
	for _, name := range []string{"redis", "mongo", "demosite", "master", "slave-0", "slave-1", "slave-2", "submit"} {
		if _, ok := cf.Services[name]; !ok {
			t.Errorf("service %s is missing", name)
		}
	}
	for name, s := range crawlers {
		if s.Image != crawlers["master"].Image {
			t.Errorf("service %s runs image %q, master %q: one image for every role", name, s.Image, crawlers["master"].Image)
		}
		if _, err := parseCrawlerArgs(s.Command); err != nil {
			t.Errorf("service %s: %v", name, err)
		}
		checkEnvironment(t, name, s.Environment)
	}
	for i := range 3 {
		name := fmt.Sprintf("slave-%d", i)
		if cmd, err := parseCrawlerArgs(crawlers[name].Command); err == nil {
			if id, _ := cmd.Flags().GetInt("id"); cmd.Name() != "slave" || id != i {
				t.Errorf("service %s runs %s --id %d", name, cmd.CommandPath(), id)
			}
		}
	}
	for _, run := range documentedRuns(t) {
		s, ok := crawlers[run.service]
		if !ok {
			t.Errorf("comment %q: %s is no crawler service", run.line, run.service)
			continue
		}
		args := run.args
		if len(args) == 0 {
			args = s.Command
		}
		if _, err := parseCrawlerArgs(args); err != nil {
			t.Errorf("comment %q: %v", run.line, err)
		}
	}
}

// checkEnvironment checks that each CRAWLER_* variable sets some flag.
func checkEnvironment(t *testing.T, service string, env map[string]string) {
	t.Helper()
	known := knownFlags(newRootCmd())
	for k := range env {
		name, ok := strings.CutPrefix(k, "CRAWLER_")
		if ok && !known[strings.ReplaceAll(strings.ToLower(name), "_", "-")] {
			t.Errorf("service %s: %s sets no crawler flag", service, k)
		}
	}
}

// documentedRun is a `docker compose run` command in a comment.
type documentedRun struct {
	line    string
	service string
	args    []string // crawler arguments; none: the service's command
}

var runComment = regexp.MustCompile(`^#\s+docker[ -]compose run (.*)$`)

// documentedRuns finds the `docker compose run` commands in the comments
// of docker-compose.yml.
func documentedRuns(t *testing.T) []documentedRun {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var runs []documentedRun
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		m := runComment.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		run, err := parseRun(m[1])
		if err != nil {
			t.Errorf("comment %q: %v", sc.Text(), err)
			continue
		}
		run.line = strings.TrimSpace(sc.Text())
		runs = append(runs, run)
	}
	if len(runs) == 0 {
		t.Error("docker-compose.yml documents no `docker compose run` to submit a job")
	}
	return runs
}

// parseRun splits `[run options] SERVICE [args] [> file]`.
func parseRun(s string) (documentedRun, error) {
	if strings.ContainsAny(s, `"'\`) {
		return documentedRun{}, errors.New("quoting is not understood here; keep documented commands plain")
	}
	words := strings.Fields(s)
	var run documentedRun
	for len(words) > 0 && strings.HasPrefix(words[0], "-") {
		switch words[0] {
		case "--rm", "-T", "--no-deps", "--service-ports":
			words = words[1:]
		default:
			return run, fmt.Errorf("run option %s is not understood here", words[0])
		}
	}
	if len(words) == 0 {
		return run, errors.New("no service")
	}
	run.service = words[0]
	for _, w := range words[1:] {
		if w == ">" || w == "|" || w == "&&" || w == "#" {
			break
		}
		run.args = append(run.args, w)
	}
	return run, nil
}

// TestCompose_DemoJob checks that the job the submit service mounts is a
// valid job whose seeds are the demo site's service at its --listen port.
func TestCompose_DemoJob(t *testing.T) {
	t.Parallel()
	cf := readCompose(t)
	site, err := parseCrawlerArgs(cf.Services["demosite"].Command)
	if err != nil {
		t.Fatalf("demosite: %v", err)
	}
	listen, _ := site.Flags().GetString("listen")
	_, port, err := net.SplitHostPort(listen)
	if err != nil {
		t.Fatalf("demosite --listen %q: %v", listen, err)
	}
	submit := cf.Services["submit"]
	cmd, err := parseCrawlerArgs(submit.Command)
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	jobPath, _ := cmd.Flags().GetString("job")
	host, err := hostPath(submit.Volumes, jobPath)
	if err != nil {
		t.Fatalf("submit --job %s: %v", jobPath, err)
	}
	spec, err := readJobFile(host)
	if err != nil {
		t.Fatal(err)
	}
	want := net.JoinHostPort("demosite", port)
	for _, seed := range spec.Seeds {
		if u, err := url.Parse(seed); err != nil || u.Host != want {
			t.Errorf("%s: seed %s is not on the demo site %s", host, seed, want)
		}
	}
	if len(spec.Seeds) == 0 || !spec.AllowPrivateNetworks {
		t.Errorf("%s: want seeds on %s and allow_private_networks: true (a compose network is private)", host, want)
	}
}

// hostPath maps a path inside a container to the file on the host through
// the service's bind mounts (HOST:CONTAINER[:MODE], HOST relative to the
// compose file).
func hostPath(volumes []string, inContainer string) (string, error) {
	for _, v := range volumes {
		parts := strings.Split(v, ":")
		if len(parts) < 2 || !strings.HasPrefix(parts[0], ".") {
			continue
		}
		rel, err := filepath.Rel(parts[1], inContainer)
		if err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.Join(repoRoot, parts[0], rel), nil
		}
	}
	return "", fmt.Errorf("no bind mount of the service holds it (volumes %q)", volumes)
}

// TestCompose_Config runs Docker Compose's own validation of the file. It
// needs no Docker daemon: `docker compose` (v2) when the plugin is
// installed, else docker-compose (v1, Debian package docker-compose).
func TestCompose_Config(t *testing.T) {
	t.Parallel()
	validator, err := composeValidator()
	if err != nil {
		t.Fatal(err)
	}
	args := append(validator[1:], "-f", "docker-compose.yml", "--profile", "example", "config", "-q")
	cmd := exec.Command(validator[0], args...)
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
}

func composeValidator() ([]string, error) {
	if exec.Command("docker", "compose", "version").Run() == nil {
		return []string{"docker", "compose"}, nil
	}
	if path, err := exec.LookPath("docker-compose"); err == nil {
		return []string{path}, nil
	}
	return nil, errors.New("neither `docker compose` nor docker-compose is installed: " +
		"apt-get install docker-compose (or the docker-compose-plugin) to validate docker-compose.yml")
}

// TestDockerfile_GoVersion checks that the image builds with the Go of
// go.mod's go line and stamps the version variable this package has.
func TestDockerfile_GoVersion(t *testing.T) {
	t.Parallel()
	df, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(mod)
	arg := regexp.MustCompile(`(?m)^ARG GO_VERSION=(\S+)$`).FindSubmatch(df)
	if goLine == nil || arg == nil {
		t.Fatalf("go.mod go line %q, Dockerfile ARG GO_VERSION %q: one is missing", goLine, arg)
	}
	if string(arg[1]) != string(goLine[1]) {
		t.Errorf("Dockerfile builds with Go %s, go.mod says go %s", arg[1], goLine[1])
	}
	// version is the variable -X sets; this line stops compiling if it is renamed.
	_ = &version
	if !bytes.Contains(df, []byte("-X main.version=")) {
		t.Error("Dockerfile does not set main.version with -ldflags -X")
	}
}
