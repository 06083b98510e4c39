package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// suggestFlag is the commands' flag error function: an unknown flag is
// answered with the command's nearest flag, as cobra answers an unknown
// command: a flag within the command's SuggestionsMinimumDistance edits
// (2 by default), else one the typed name begins.
func suggestFlag(cmd *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok || name == "" {
		return err
	}
	if near := nearestFlag(cmd.Flags(), name, suggestionDistance(cmd)); near != "" {
		return fmt.Errorf("%w (did you mean --%s?)", err, near)
	}
	return err
}

// suggestionDistance is how many edits a suggestion may be away, as cobra
// counts them.
func suggestionDistance(cmd *cobra.Command) int {
	if cmd.SuggestionsMinimumDistance > 0 {
		return cmd.SuggestionsMinimumDistance
	}
	return 2
}

// nearestFlag is the visible flag fewest edits from name, within max
// edits; else the first that name begins; else "".
func nearestFlag(flags *pflag.FlagSet, name string, max int) string {
	best, bestDist, prefixed := "", max+1, ""
	flags.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		if d := levenshtein(strings.ToLower(name), f.Name); d < bestDist {
			best, bestDist = f.Name, d
		}
		if prefixed == "" && strings.HasPrefix(f.Name, strings.ToLower(name)) {
			prefixed = f.Name
		}
	})
	if best != "" {
		return best
	}
	return prefixed
}

// levenshtein is the edit distance between a and b, in bytes.
func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
