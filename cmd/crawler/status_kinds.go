package main

import (
	"fmt"
	"io"
	"sort"

	"github.com/crawler-dev/crawler/client"
)

// printKinds prints the job's per-kind counters, in kind-name order, and
// its warnings, for client status.
func printKinds(w io.Writer, st *client.Status) {
	names := make([]string, 0, len(st.Kinds))
	for name := range st.Kinds {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		k := st.Kinds[name]
		fmt.Fprintf(w, "  kind %s: discovered %d = stored %d + failed %d + skipped %d + duplicates %d + cancelled %d\n",
			name, k.Discovered, k.Stored, k.Failed, k.Skipped, k.Duplicates, k.Cancelled)
	}
	for _, warning := range st.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", warning)
	}
}
