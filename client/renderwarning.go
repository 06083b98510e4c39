package client

import (
	"context"
	"fmt"
)

// renderWarnings say why tasks of kinds that say render wait: no live
// slave can render (none was started with a browser), or, while the
// masters catch up with a slave that joined, that they are being routed.
func (c *Client) renderWarnings(ctx context.Context, st *Status) []string {
	n := st.Counters.WaitingForRenderer
	if n == 0 {
		return nil
	}
	crew, err := c.Crew(ctx)
	if err != nil {
		return nil
	}
	if crew.Renderers > 0 {
		return []string{fmt.Sprintf("%d tasks of kinds that say render wait to be routed to the %d live slaves that can render", n, crew.Renderers)}
	}
	return []string{fmt.Sprintf("%d tasks of kinds that say render wait for a slave that can render: none of the %d live slaves has a browser "+
		"(start a slave with chromium installed, or with --browser PATH)", n, crew.Slaves)}
}
