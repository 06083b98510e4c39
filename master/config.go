package master

import (
	"context"
	"fmt"
	"strconv"
)

// Fields of the cluster's config hash (cluster.NodeKeys.Config) that every
// master must agree on: two masters that route with different settings
// would send the same URL to different slaves.
const (
	ConfigAssignMode = "assign_mode"
	ConfigMaxWeight  = "max_weight"
)

// agreeOnConfig records the master's routing settings in the cluster's
// config hash on first use, and refuses to run with settings that differ
// from those recorded.
func (m *Master) agreeOnConfig(ctx context.Context) error {
	settings := []struct{ field, flag, value string }{
		{ConfigAssignMode, "assign-mode", m.opts.AssignMode},
		{ConfigMaxWeight, "max-weight", strconv.FormatFloat(m.opts.MaxWeight, 'g', -1, 64)},
	}
	key := m.deps.Keys.Nodes().Config()
	for _, s := range settings {
		if err := m.deps.Redis.HSetNX(ctx, key, s.field, s.value).Err(); err != nil {
			return fmt.Errorf("record %s: %w", s.field, err)
		}
		got, err := m.deps.Redis.HGet(ctx, key, s.field).Result()
		if err != nil {
			return fmt.Errorf("read %s: %w", s.field, err)
		}
		if got != s.value {
			return fmt.Errorf("--%s: %s differs from the cluster's %s (recorded in %s %s); every master must route alike",
				s.flag, s.value, got, key, s.field)
		}
	}
	return nil
}
