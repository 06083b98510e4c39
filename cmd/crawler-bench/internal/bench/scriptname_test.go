package bench

import (
	"strings"
	"testing"

	"github.com/crawler-dev/crawler/internal/luascript"
)

func TestScriptName(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"-- SlaveQueue.Ack: acknowledge tasks\nlocal x = 1", "SlaveQueue.Ack"},
		{"-- Registry.Heartbeat. KEYS: leases", "Registry.Heartbeat"},
		{"-- acquire: grant up to `want` requests\n-- GCRA: more\nreturn 1", "acquire"},
		{"-- Leased.Release and Leased.Requeue: hand back", "Leased.Release"},
		{"-- Set mode (scrapy-redis's dupefilter).\nlocal a\n-- SeenBatch: check", "Set mode SeenBatch"},
		{"-- Layout shared by every filter script:\nlocal l\n-- Bloom mode: each slice\nlocal b\n-- Admit: check and insert\nlocal c\n-- Note: inner", "Bloom mode Admit"},
		{"-- The fence every frontier script starts with: it acts\nlocal f\n-- frontier.commit: finish a list page", "frontier.commit"},
		{"return redis.call('GET', KEYS[1])", ""},
	} {
		if got := scriptName(luascript.Prelude() + "\n" + tc.src); got != tc.want {
			t.Errorf("scriptName(%.40q) = %q, want %q", tc.src, got, tc.want)
		}
	}
}

func TestScriptNames(t *testing.T) {
	s := newScriptNames()
	src := luascript.Prelude() + "\n-- Leased.Take: move entries\nreturn 1"
	label := s.label([]string{"EVALSHA", "ABCDEF0123456789ABCDEF0123456789ABCDEF01", "1", "k"})
	if got := s.resolve(label); got != "script sha:abcdef01" {
		t.Errorf("unknown script = %q", got)
	}
	evalLabel := s.label([]string{"eval", src, "0"})
	if got := s.resolve(evalLabel); got != "script Leased.Take" {
		t.Errorf("eval = %q", got)
	}
	_, sha, _ := strings.Cut(evalLabel, shaMark) // the SHA1 of src, as go-redis sends it
	if got := s.resolve(s.label([]string{"EVALSHA", strings.ToUpper(sha), "0"})); got != "script Leased.Take" {
		t.Errorf("known script by SHA1 = %q", got)
	}
	other := luascript.Prelude() + "\n-- Leased.Take: another script of the same name\nreturn 2"
	if got := s.resolve("script" + shaMark + s.learn(other)); got == "script Leased.Take" {
		t.Errorf("two scripts share the name %q", got)
	}
	for args, want := range map[[2]string]string{{"CLIENT", "SETINFO"}: "client|setinfo", {"HGET", "k"}: "hget", {"script", "LOAD"}: "script|load"} {
		if got := s.resolve(s.label(args[:])); got != want {
			t.Errorf("label(%v) = %q, want %q", args, got, want)
		}
	}
}
