// Package k8s checks the Kubernetes manifests of deploy/k8s/base: it
// builds them with kustomize (sigs.k8s.io/kustomize/api/krusty), decodes
// every object strictly into its k8s.io/api type, checks what the
// crawler's processes need of them (two masters, slaves whose pod ordinal
// is their --id, named ports for the status page and metrics) and that
// every flag and CRAWLER_* variable the containers get is one the
// crawler binary accepts. It is a module of its own, so the crawler does
// not carry the Kubernetes libraries; `make k8s-check` runs it.
package k8s
