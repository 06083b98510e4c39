// Command crawler-bench measures the crawler: the dupefilter, the
// assigner, crawls of real master and slave processes, the one-site
// comparison with colly, many sites at once on the politeness defaults, the crawl model of page kinds beside two kinds,
// an idle cluster, memory, the proxy pool, and
// the report that writes docs/benchmarks.md (`make bench`).
//
// It is a binary of its own so that the crawler users run holds no
// benchmark or test code: it starts the crawler binary given by
// --crawler (by default the one beside it, else on $PATH) as its
// processes. Each subcommand lives in a file of its own.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/cluster"
)

// defaultRedis is the Redis of the benchmarks that do not start their own.
const defaultRedis = "redis://127.0.0.1:6379/0"

// crawlerFlag is --crawler: the crawler executable the benchmarks start.
var crawlerFlag string

func main() {
	if err := newRootCmd().ExecuteContext(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "crawler-bench:", err)
		os.Exit(1)
	}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "crawler-bench",
		Short: "Measure the crawler's components and print comparison tables",
		Example: `  crawler-bench site                                        # one site, beside colly (0 and 20 ms)
  crawler-bench dedup --redis redis://127.0.0.1:6379/0 --format md
  crawler-bench assign --slots 64 --slaves 10 --keys 1000000
  crawler-bench crawl --details 4000 --slaves 1,2,4,8 --hosts 8
  crawler-bench hosts --hosts 40,120 --redis-server redis-server  # many sites on the job file's politeness defaults
  crawler-bench kinds --pages 4000                           # the shop with page kinds beside two kinds
  crawler-bench render --pages 200 --tabs 1,2,4             # rendered pages beside plain fetches
  crawler-bench recrawl --pages 200 --rounds 40              # adaptive re-crawl beside checking every page
  crawler-bench priority --high 500 --low 2000               # high-priority pages first, beside the order found
  crawler-bench report -o docs/benchmarks.md     # all of them, each on a Redis of its own (make bench)`,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&crawlerFlag, "crawler", "",
		"the crawler executable the benchmarks start as masters and slaves (default: crawler beside this binary, else on $PATH)")
	root.AddCommand(newBenchDedupCmd(), newBenchAssignCmd(), newBenchCrawlCmd(), newBenchProxyCmd(),
		newBenchIdleCmd(), newBenchMemoryCmd(), newBenchRoundTripsCmd(), newBenchReportCmd(), newBenchSiteCmd(), newBenchKindsCmd(), newBenchRenderCmd(),
		newBenchHostsCmd(), newBenchRecrawlCmd(), newBenchPriorityCmd())
	return root
}

// crawlerBinary is the crawler executable to start: --crawler, else
// crawler beside this binary (bin/crawler beside bin/crawler-bench),
// else crawler on $PATH.
func crawlerBinary() (string, error) {
	if crawlerFlag != "" {
		exe, err := exec.LookPath(crawlerFlag)
		if err != nil {
			return "", fmt.Errorf("--crawler: %w", err)
		}
		return filepath.Abs(exe)
	}
	if self, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(self), "crawler")
		if st, err := os.Stat(beside); err == nil && !st.IsDir() {
			return beside, nil
		}
	}
	exe, err := exec.LookPath("crawler")
	if err != nil {
		return "", fmt.Errorf("--crawler: no crawler binary beside crawler-bench nor on $PATH (make build, or give --crawler)")
	}
	return exe, nil
}

// fieldFlags maps a benchmark's option fields (CrawlOptions.Hosts) to the
// flags that set them (--hosts), so that an error reported by field
// reaches the user by flag.
type fieldFlags map[string]string

// name rewrites a *cluster.FieldError into the flag's terms; other errors
// pass through.
func (m fieldFlags) name(err error) error {
	var fe *cluster.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	if flag, ok := m[fe.Field]; ok {
		return fmt.Errorf("--%s: %v %s", flag, fe.Value, fe.Problem)
	}
	return err
}
