package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// garbled matches wording that lost a word or gained one: "size a of",
// "the the".
var garbled = regexp.MustCompile(`(?i)\b(size a of|a of|of of|the the|to to|a a|an an)\b`)

// TestHelp_everyCommand (issue 18): every subcommand's --help has an
// example, and no help text or flag usage reads like "size a of the
// virtual node table".
func TestHelp_everyCommand(t *testing.T) {
	t.Parallel()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%q has no Example", c.CommandPath())
		}
		for what, text := range map[string]string{"Short": c.Short, "Long": c.Long} {
			if m := garbled.FindString(text); m != "" {
				t.Errorf("%q %s reads %q: %q", c.CommandPath(), what, m, text)
			}
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if m := garbled.FindString(f.Usage); m != "" {
				t.Errorf("%q --%s reads %q: %q", c.CommandPath(), f.Name, m, f.Usage)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
}
