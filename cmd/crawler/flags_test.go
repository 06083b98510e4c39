package main

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/master"
	"github.com/crawler-dev/crawler/slave"
)

// TestFieldFlags: every option field a role command records names a flag
// it registered, and an option a library refuses by field reaches the
// user by that flag.
func TestFieldFlags(t *testing.T) {
	t.Parallel()
	root := newRootCmd()
	for _, path := range []string{"master", "slave"} {
		cmd, _, err := root.Find([]string{path})
		if err != nil {
			t.Fatal(err)
		}
		for _, flag := range []string{"max-slaves", "id", "max-memory"} {
			if cmd.Flags().Lookup(flag) == nil {
				t.Errorf("crawler %s has no --%s", path, flag)
			}
		}
	}
	var cf clusterFlags
	cf.register(&cobra.Command{Use: "x"})
	if cf.fields["MaxSlaves"] != "max-slaves" {
		t.Errorf("clusterFlags recorded %v", cf.fields)
	}
	fields := fieldFlags{}
	if name := fields.flag("JobLease", "job-lease"); name != "job-lease" {
		t.Fatalf("flag returned %q", name)
	}
	mo := master.DefaultOptions()
	mo.JobLease = time.Millisecond
	if err := fields.name(mo.Validate()); err == nil || !strings.HasPrefix(err.Error(), "--job-lease: 1ms ") {
		t.Errorf("master JobLease refused as %v, want --job-lease", err)
	}
	so := slave.DefaultOptions()
	so.MaxSlaves = cluster.MaxSlavesLimit + 1
	if err := cf.fields.name(so.Validate()); err == nil || !strings.HasPrefix(err.Error(), "--max-slaves: ") {
		t.Errorf("slave MaxSlaves refused as %v, want --max-slaves", err)
	}
	if err := fields.name(so.Validate()); err == nil || strings.HasPrefix(err.Error(), "--") {
		t.Errorf("a field no flag sets became %v; want the library's own words", err)
	}
}
