package cluster

import (
	"regexp"
	"strings"
	"testing"
)

var hashTagRE = regexp.MustCompile(`\{[^}]*\}`)

// hashTag returns the part of key Redis Cluster hashes: the first {...}.
func hashTag(t *testing.T, key string) string {
	t.Helper()
	tag := hashTagRE.FindString(key)
	if tag == "" || tag == "{}" {
		t.Fatalf("key %q has no hash tag", key)
	}
	return tag
}

func TestKeys_Job(t *testing.T) {
	t.Run("one hash tag per job", func(t *testing.T) {
		j := Keys{Prefix: "p"}.Job("news")
		keys := []string{j.Spec(), j.State(), j.Owner(), j.Fence(), j.Stats(), j.Frontier(), j.FrontierActive(),
			j.ListSeen(3), j.Committed(3), j.Queue(0), j.Queue(17), j.Inflight(17), j.Dedup(), j.Simhash()}
		seen := map[string]bool{}
		for _, k := range keys {
			if tag := hashTag(t, k); tag != "{p:job:news}" {
				t.Errorf("key %q has tag %q, want {p:job:news}", k, tag)
			}
			if !strings.HasPrefix(k, j.Tag()) {
				t.Errorf("key %q does not start with the job's tag %q", k, j.Tag())
			}
			if seen[k] {
				t.Errorf("key %q is used twice", k)
			}
			seen[k] = true
		}
	})
	t.Run("jobs differ", func(t *testing.T) {
		k := Keys{Prefix: "p"}
		if a, b := k.Job("a").Stats(), k.Job("b").Stats(); a == b || hashTag(t, a) == hashTag(t, b) {
			t.Errorf("jobs a and b share stats key or tag: %q, %q", a, b)
		}
		if a, b := k.Job("a").Queue(1), k.Job("a").Queue(2); a == b {
			t.Errorf("slaves 1 and 2 share queue %q", a)
		}
	})
	t.Run("empty prefix uses crawler", func(t *testing.T) {
		var k Keys
		for _, tc := range []struct{ got, want string }{
			{k.Job("news").Stats(), "{crawler:job:news}:stats"},
			{k.Job("news").Queue(3), "{crawler:job:news}:queue:3"},
			{k.Job("news").Inflight(3), "{crawler:job:news}:inflight:3"},
			{k.Jobs(), "crawler:jobs"},
			{k.Nodes().Leases(), "{crawler:nodes}:leases"},
		} {
			if tc.got != tc.want {
				t.Errorf("key = %q, want %q", tc.got, tc.want)
			}
		}
	})
}

func TestKeys_Nodes(t *testing.T) {
	n := Keys{Prefix: "x"}.Nodes()
	for _, k := range []string{n.Leases(), n.Info(), n.Epoch()} {
		if tag := hashTag(t, k); tag != "{x:nodes}" {
			t.Errorf("key %q has tag %q, want {x:nodes}", k, tag)
		}
	}
}

func TestSlaveStat(t *testing.T) {
	if got := SlaveStat(StatStored, 3); got != "stored:3" {
		t.Errorf("SlaveStat(stored, 3) = %q, want stored:3", got)
	}
}
