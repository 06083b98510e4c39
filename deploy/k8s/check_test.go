package k8s

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// objects builds the base and decodes each object strictly into its type.
func objects(t *testing.T) map[string]any {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	res, err := k.Run(filesys.MakeFsOnDisk(), "base")
	if err != nil {
		t.Fatalf("kustomize build base: %v", err)
	}
	out := map[string]any{}
	for _, r := range res.Resources() {
		b, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		var obj any
		switch r.GetKind() {
		case "Deployment":
			obj = &appsv1.Deployment{}
		case "StatefulSet":
			obj = &appsv1.StatefulSet{}
		case "Service":
			obj = &corev1.Service{}
		case "ConfigMap":
			obj = &corev1.ConfigMap{}
		default:
			t.Errorf("%s %s: a kind this check does not know", r.GetKind(), r.GetName())
			continue
		}
		if err := yaml.UnmarshalStrict(b, obj); err != nil {
			t.Errorf("%s %s: %v", r.GetKind(), r.GetName(), err)
			continue
		}
		out[r.GetKind()+"/"+r.GetName()] = obj
	}
	return out
}

func get[T any](t *testing.T, objs map[string]any, key string) T {
	t.Helper()
	o, ok := objs[key].(T)
	if !ok {
		t.Fatalf("the base has no %s", key)
	}
	return o
}

// TestBase: the objects the README promises, shaped as the cluster needs.
func TestBase(t *testing.T) {
	objs := objects(t)
	master := get[*appsv1.Deployment](t, objs, "Deployment/crawler-master")
	if r := master.Spec.Replicas; r == nil || *r != 2 {
		t.Errorf("masters: %v replicas, want 2", r)
	}
	slave := get[*appsv1.StatefulSet](t, objs, "StatefulSet/crawler-slave")
	if id := envVar(slave.Spec.Template.Spec.Containers[0], "CRAWLER_ID"); id == nil || id.ValueFrom == nil ||
		id.ValueFrom.FieldRef == nil || id.ValueFrom.FieldRef.FieldPath != "metadata.labels['apps.kubernetes.io/pod-index']" {
		t.Errorf("slave CRAWLER_ID %+v: want the pod's ordinal (label apps.kubernetes.io/pod-index)", id)
	}
	get[*appsv1.StatefulSet](t, objs, "StatefulSet/crawler-redis")
	get[*corev1.Service](t, objs, "Service/crawler-redis")
	svc := get[*corev1.Service](t, objs, "Service/crawler-master")
	ports := map[string]bool{}
	for _, p := range svc.Spec.Ports {
		ports[p.Name] = p.TargetPort.StrVal == p.Name
	}
	if !ports["http"] || !ports["metrics"] {
		t.Errorf("master Service ports %+v: want http and metrics, each to the container port of its name", svc.Spec.Ports)
	}
	for key, o := range objs {
		if tpl, sel := template(o); tpl != nil && !matches(sel, tpl.Labels) {
			t.Errorf("%s: its selector %v does not match its pods' labels %v", key, sel, tpl.Labels)
		}
	}
}

// TestFlags: every --flag and CRAWLER_* variable given to a crawler
// container is one its subcommand accepts, by the built binary's --help.
func TestFlags(t *testing.T) {
	objs := objects(t)
	cm := get[*corev1.ConfigMap](t, objs, "ConfigMap/crawler-config")
	for key, o := range objs {
		for _, c := range containers(o) {
			if !strings.HasPrefix(c.Image, "crawler") {
				continue
			}
			if len(c.Args) == 0 {
				t.Errorf("%s: container %s has no subcommand", key, c.Name)
				continue
			}
			sub := c.Args[0]
			flags := flagsOf(t, sub)
			for _, a := range c.Args[1:] {
				if name, ok := strings.CutPrefix(a, "--"); ok && !flags[strings.SplitN(name, "=", 2)[0]] {
					t.Errorf("%s: `crawler %s` has no flag %s", key, sub, a)
				}
			}
			var env []string
			for _, e := range c.Env {
				env = append(env, e.Name)
			}
			for _, from := range c.EnvFrom {
				if from.ConfigMapRef != nil && from.ConfigMapRef.Name == cm.Name {
					for name := range cm.Data {
						env = append(env, name)
					}
				}
			}
			for _, name := range env {
				flag := strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(name, "CRAWLER_")), "_", "-")
				if !strings.HasPrefix(name, "CRAWLER_") || !flags[flag] {
					t.Errorf("%s: %s is not a flag of `crawler %s` (--%s)", key, name, sub, flag)
				}
			}
		}
	}
}

var (
	helpMu sync.Mutex
	helps  = map[string]map[string]bool{}
	flagRe = regexp.MustCompile(`(?m)^\s+(?:-\w, )?--([a-z0-9-]+)`)
)

// flagsOf reads the flags of `crawler sub --help` from the binary named
// by $CRAWLER_BIN, or one built from this repository.
func flagsOf(t *testing.T, sub string) map[string]bool {
	t.Helper()
	helpMu.Lock()
	defer helpMu.Unlock()
	if f, ok := helps[sub]; ok {
		return f
	}
	out, err := exec.Command(binary(t), sub, "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("crawler %s --help: %v\n%s", sub, err, out)
	}
	f := map[string]bool{}
	for _, m := range flagRe.FindAllStringSubmatch(string(out), -1) {
		f[m[1]] = true
	}
	if !f["redis"] {
		t.Fatalf("crawler %s --help lists no --redis:\n%s", sub, out)
	}
	helps[sub] = f
	return f
}

var (
	buildOnce sync.Once
	built     string
	buildErr  error
)

func binary(t *testing.T) string {
	t.Helper()
	if b := os.Getenv("CRAWLER_BIN"); b != "" {
		return b
	}
	buildOnce.Do(func() {
		built = filepath.Join(t.TempDir(), "crawler")
		cmd := exec.Command("go", "build", "-o", built, "./cmd/crawler")
		cmd.Dir = filepath.Join("..", "..")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			buildErr = fmt.Errorf("build crawler: %v\n%s", err, stderr.String())
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return built
}

func envVar(c corev1.Container, name string) *corev1.EnvVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

// template is a workload's pod template and selector.
func template(o any) (*corev1.PodTemplateSpec, map[string]string) {
	switch v := o.(type) {
	case *appsv1.Deployment:
		return &v.Spec.Template, v.Spec.Selector.MatchLabels
	case *appsv1.StatefulSet:
		return &v.Spec.Template, v.Spec.Selector.MatchLabels
	}
	return nil, nil
}

func containers(o any) []corev1.Container {
	if tpl, _ := template(o); tpl != nil {
		return tpl.Spec.Containers
	}
	return nil
}

func matches(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}
