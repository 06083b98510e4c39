package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/internal/demosite"
	"github.com/crawler-dev/crawler/jobspec"
)

func newDemoCmd(a *app) *cobra.Command {
	var (
		cfg       runConfig
		details   int
		listen    string
		serveOnly bool
		shop      bool
	)
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Serve a built-in demo site on loopback and crawl it with `run`",
		Example: `  crawler demo                        # serve, crawl with 3 slaves, write demo-items.jsonl, check
  crawler demo --details 3000 -o demo.csv
  crawler demo --shop                 # a shop of page kinds: categories, lists, a JSON API, sitemaps
  crawler demo -o - --quiet | jq -r .fields.title       # items on stdout, everything else on stderr
  crawler demo --serve-only --listen 127.0.0.1:8080 > demo.yaml   # only the site, for a cluster to crawl; its job file on stdout`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if details < 1 {
				return fmt.Errorf("--details: %d must be at least 1", details)
			}
			if !serveOnly {
				if err := cfg.validate(); err != nil { // before the site starts and says where it is
					return err
				}
			}
			if shop && !serveOnly {
				return runDemoShop(cmd, a, cfg, listen)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			site, base, closeSite, err := serveDemo(listen, details)
			if err != nil {
				return err
			}
			defer closeSite()
			if serveOnly {
				// The job file alone on stdout: crawler demo --serve-only > demo.yaml
				fmt.Fprintf(cmd.ErrOrStderr(), "demo site at %s (%d list pages, %d unique detail pages); its job file is on stdout\n",
					base, site.ListPages(), details)
				fmt.Fprint(cmd.OutOrStdout(), demosite.JobYAML("demo", base))
				<-ctx.Done()
				return nil
			}
			stop() // the crawl handles its own interruption
			return runDemo(cmd, a, cfg, site, base)
		},
	}
	cfg.register(cmd, "demo-items.jsonl", 3, 16) // three slaves, to show the work spread
	f := cmd.Flags()
	f.IntVar(&details, "details", 300, "unique detail pages on the demo site")
	f.StringVar(&listen, "listen", "127.0.0.1:0", "address the demo site listens on (a bare port means 127.0.0.1, 0.0.0.0:PORT every interface)")
	f.BoolVar(&shop, "shop", false, "crawl the demo shop instead (page kinds, a JSON API, sitemaps; --details does not apply; not with --serve-only)")
	f.BoolVar(&serveOnly, "serve-only", false, "only serve the site (until interrupted) and print its job file on stdout: crawl nothing")
	return cmd
}

// serveDemo serves a demo site of details pages on listen.
func serveDemo(listen string, details int) (*demosite.Site, string, func(), error) {
	site := demosite.New(demosite.Options{Details: details})
	base, closeSite, err := serveHandler(listen, site)
	return site, base, closeSite, err
}

// serveHandler serves h on listen and returns its base URL.
func serveHandler(listen string, h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", listenAddr(listen))
	if err != nil {
		return "", nil, fmt.Errorf("--listen: %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(ln)
	}()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close(); <-served }, nil
}

func runDemo(cmd *cobra.Command, a *app, cfg runConfig, site *demosite.Site, base string) error {
	spec, err := jobspec.Parse(strings.NewReader(demosite.JobYAML("demo", base)))
	if err != nil {
		return fmt.Errorf("demo job: %w", err)
	}
	fmt.Fprintf(reportWriter(cmd, cfg), "demo site at %s: %d list pages\n", base, site.ListPages())
	return crawlHere(cmd, a, cfg, spec, func(w io.Writer, st *client.Status) { printDemoCheck(w, site, st) })
}

// printDemoCheck compares the crawl with what the site holds.
func printDemoCheck(w io.Writer, site *demosite.Site, st *client.Status) {
	want, gone := 0, 0
	for _, o := range site.Expected() {
		if o == demosite.Gone {
			gone++
		} else {
			want++
		}
	}
	c := st.Counters
	fmt.Fprintf(w, "expected: %d pages stored, %d gone (404) recorded as failed; got %d stored, %d failed\n",
		want, gone, c.Stored, c.Failed)
	fmt.Fprintf(w, "every link accounted for: discovered %d = stored %d + failed %d + skipped %d + duplicates %d: %v\n",
		c.Discovered, c.Stored, c.Failed, c.Skipped, c.Duplicates, c.Discovered == c.Settled())
}
