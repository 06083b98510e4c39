package main

import (
	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/cmd/crawler-bench/internal/bench"
)

func newBenchRenderCmd() *cobra.Command {
	opts := bench.DefaultRenderOptions()
	format := string(bench.FormatText)
	names := fieldFlags{"Pages": "pages", "Tabs": "tabs", "Format": "format"}
	cmd := &cobra.Command{
		Use:   "render",
		Short: "Rendered pages/s, CPU per page and browser memory per tab beside plain fetches of the same page",
		Long: `render serves a page built by script on loopback (its title and price come
from a fetch() of JSON after its script loads) and, at each --tabs, fetches
it --pages times plainly, then renders it --pages times in headless
Chromium (--browser), the rows interleaved. It prints pages/s, CPU per page
(this process and the browser's processes) and the browser's peak memory
(Pss) per tab. Wall time is noisy on a loaded machine; CPU per page is the
number to compare.`,
		Example:      `  crawler-bench render --pages 200 --tabs 1,2,4 --browser chromium`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := bench.Format(format)
			if err := f.Validate(); err != nil {
				return names.name(err)
			}
			rows, err := bench.Render(cmd.Context(), opts)
			if len(rows) > 0 {
				_ = bench.WriteTables(cmd.OutOrStdout(), f, bench.RenderTable(rows))
			}
			return names.name(err)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.Browser, "browser", opts.Browser, "Chromium: a path or a name on PATH")
	fs.IntVar(&opts.Pages, "pages", opts.Pages, "pages each row fetches or renders")
	fs.IntSliceVar(&opts.Tabs, "tabs", opts.Tabs, "concurrencies compared: fetchers, or browser tabs")
	fs.StringVar(&format, "format", format, "output format: text or md (Markdown)")
	return cmd
}
