package membership

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/crawler-dev/crawler/assign"
	"github.com/crawler-dev/crawler/cluster"
)

// Snapshot drops lapsed leases (bumping the epoch if it dropped any) and
// returns the live table, atomically: Version is the epoch and Nodes the
// live slaves sorted by ID, with their weights (a declared weight of 0
// counts as assign.DefaultMaxWeight). A master routes one batch over one
// snapshot.
func (r *Registry) Snapshot(ctx context.Context) (assign.Table, error) {
	epoch, infos, err := r.load(ctx)
	if err != nil {
		return assign.Table{}, fmt.Errorf("snapshot: %w", err)
	}
	table := assign.Table{Version: epoch, Nodes: make([]assign.Node, len(infos))}
	for i, info := range infos {
		table.Nodes[i] = assign.Node{ID: info.ID, Weight: weight(info), Render: info.Render}
	}
	return table, nil
}

// Nodes returns the live slaves' info sorted by ID, for status reports. Like
// Snapshot it drops lapsed leases first.
func (r *Registry) Nodes(ctx context.Context) ([]cluster.NodeInfo, error) {
	_, infos, err := r.load(ctx)
	if err != nil {
		return nil, fmt.Errorf("nodes: %w", err)
	}
	return infos, nil
}

// weight is the node's routing weight: its declared weight, or the default.
func weight(info cluster.NodeInfo) float64 {
	if info.Weight == 0 {
		return assign.DefaultMaxWeight
	}
	return info.Weight
}

// load runs the snapshot script and decodes its {epoch, ids, infos} reply.
func (r *Registry) load(ctx context.Context) (int64, []cluster.NodeInfo, error) {
	keys := []string{r.keys.Leases(), r.keys.Info(), r.keys.Epoch(), r.config}
	res, err := snapshotScript.Run(ctx, r.rdb, keys, r.opts.MaxSlaves).Slice()
	if err != nil {
		return 0, nil, r.translate(err)
	}
	if len(res) != 3 {
		return 0, nil, fmt.Errorf("snapshot script: %d reply fields, want 3", len(res))
	}
	epoch, _ := res[0].(int64)
	ids, _ := res[1].([]any)
	raw, _ := res[2].([]any)
	infos := make([]cluster.NodeInfo, 0, len(ids))
	for i, v := range ids {
		info, err := decodeNode(v, raw, i)
		if err != nil {
			return 0, nil, err
		}
		infos = append(infos, info)
	}
	slices.SortFunc(infos, func(a, b cluster.NodeInfo) int { return a.ID - b.ID })
	return epoch, infos, nil
}

// decodeNode decodes the i-th live node: its ID from the lease set, its info
// from the hash. A node whose info is missing keeps just its ID.
func decodeNode(id any, raw []any, i int) (cluster.NodeInfo, error) {
	s, _ := id.(string)
	n, err := strconv.Atoi(s)
	if err != nil {
		return cluster.NodeInfo{}, fmt.Errorf("lease member %q: not a slave id", s)
	}
	info := cluster.NodeInfo{ID: n}
	if i < len(raw) {
		if data, ok := raw[i].(string); ok {
			if err := json.Unmarshal([]byte(data), &info); err != nil {
				return cluster.NodeInfo{}, fmt.Errorf("slave %d info: %w", n, err)
			}
		}
	}
	info.ID = n
	return info, nil
}
