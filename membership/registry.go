package membership

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/luascript"
)

// DefaultLease is the heartbeat lease used when Options.Lease is zero.
const DefaultLease = 5 * time.Second

// ConfigMaxSlaves is the field of the node table's config hash
// (NodeKeys.Config) that records the cluster's max slaves.
const ConfigMaxSlaves = "max_slaves"

var (
	// ErrIDTaken means another live slave (another token) holds the ID.
	// The error wrapping it says who: host, pid and since when.
	ErrIDTaken = errors.New("membership: slave id taken")
	// ErrLeaseLost means the lease lapsed or another run now holds the ID;
	// the slave must stop taking work under it and register again.
	ErrLeaseLost = errors.New("membership: lease lost")
	// ErrMaxSlavesMismatch means the node table was created with another
	// max slaves than this Registry's; the error wrapping it names both.
	ErrMaxSlavesMismatch = errors.New("membership: max slaves differs from the cluster's")
	// ErrInvalidNode means a node's ID, token or weight is unusable; the
	// error wrapping it names the field and value.
	ErrInvalidNode = errors.New("membership: invalid node")
)

// Options configure a Registry.
type Options struct {
	// Lease is how long a registration lives without a heartbeat; zero
	// means DefaultLease. KeepAlive renews every Lease/3.
	Lease time.Duration
	// MaxSlaves is a, the size of the virtual node table; IDs run from 0
	// to MaxSlaves-1. Zero means cluster.DefaultMaxSlaves. Every process of
	// a cluster must agree on it; the first one records it in Redis.
	MaxSlaves int
	// Logger receives transient errors retried by KeepAlive and Watch; nil
	// means no logging.
	Logger *zap.Logger
}

// Registry is a handle on the live node table in Redis. It is safe for
// concurrent use.
type Registry struct {
	rdb    redis.UniversalClient
	keys   cluster.NodeKeys
	config string
	opts   Options
	log    *zap.Logger
}

// New returns a Registry over the node table of keys. It does no I/O; the
// max slaves check happens on the first Register, Heartbeat or Snapshot.
func New(rdb redis.UniversalClient, keys cluster.Keys, opts Options) (*Registry, error) {
	if rdb == nil {
		return nil, errors.New("membership: redis client is nil")
	}
	if opts.Lease == 0 {
		opts.Lease = DefaultLease
	}
	if opts.Lease < 10*time.Millisecond {
		return nil, fmt.Errorf("membership: lease %v: must be at least 10ms", opts.Lease)
	}
	if opts.MaxSlaves == 0 {
		opts.MaxSlaves = cluster.DefaultMaxSlaves
	}
	if opts.MaxSlaves < 0 {
		return nil, fmt.Errorf("membership: max slaves %d: must be positive", opts.MaxSlaves)
	}
	log := opts.Logger
	if log == nil {
		log = zap.NewNop()
	}
	nodes := keys.Nodes()
	return &Registry{
		rdb:    rdb,
		keys:   nodes,
		config: nodes.Config(),
		opts:   opts,
		log:    log.Named("membership"),
	}, nil
}

// Lease returns the registry's lease duration.
func (r *Registry) Lease() time.Duration { return r.opts.Lease }

// MaxSlaves returns the size of the virtual node table.
func (r *Registry) MaxSlaves() int { return r.opts.MaxSlaves }

// Register adds info to the live table with a fresh lease and bumps the
// epoch. It fails with a *TakenError (errors.Is ErrIDTaken) if another live
// slave (another Token) holds the ID; a lapsed lease is taken over.
// Registering again under the same Token renews the lease. A zero StartedAt
// is set to now.
func (r *Registry) Register(ctx context.Context, info cluster.NodeInfo) error {
	return r.register(ctx, info, "")
}

// register is Register that may also replace the live registration of
// token replace (a dead process of the same slave).
func (r *Registry) register(ctx context.Context, info cluster.NodeInfo, replace string) error {
	if err := r.validate(info); err != nil {
		return fmt.Errorf("register: %w", err)
	}
	if info.StartedAt.IsZero() {
		info.StartedAt = time.Now()
	}
	data, err := json.Marshal(info)
	if err != nil {
		return fmt.Errorf("register slave %d: %w", info.ID, err)
	}
	keys := []string{r.keys.Leases(), r.keys.Info(), r.keys.Epoch(), r.config}
	err = registerScript.Run(ctx, r.rdb, keys, r.opts.MaxSlaves, info.ID, info.Token, data,
		r.opts.Lease.Milliseconds(), replace).Err()
	if err != nil {
		return fmt.Errorf("register slave %d: %w", info.ID, r.translate(err))
	}
	return nil
}

// validate checks the fields of info that the table relies on.
func (r *Registry) validate(info cluster.NodeInfo) error {
	switch {
	case info.ID < 0 || info.ID >= r.opts.MaxSlaves:
		return fmt.Errorf("%w: id %d outside [0, %d)", ErrInvalidNode, info.ID, r.opts.MaxSlaves)
	case info.Token == "":
		return fmt.Errorf("%w: slave %d: token is empty", ErrInvalidNode, info.ID)
	case info.Weight < 0 || math.IsNaN(info.Weight) || math.IsInf(info.Weight, 0):
		return fmt.Errorf("%w: slave %d: weight %v must be a positive finite number (0 means 1)", ErrInvalidNode, info.ID, info.Weight)
	}
	return nil
}

// Heartbeat renews slave id's lease. It fails with ErrLeaseLost if the
// lease lapsed or another token holds the ID.
func (r *Registry) Heartbeat(ctx context.Context, id int, token string) error {
	keys := []string{r.keys.Leases(), r.keys.Info(), r.config}
	err := heartbeatScript.Run(ctx, r.rdb, keys, r.opts.MaxSlaves, id, token, r.opts.Lease.Milliseconds()).Err()
	if err != nil {
		return fmt.Errorf("heartbeat slave %d: %w", id, r.translate(err))
	}
	return nil
}

// Deregister removes slave id from the live table (a graceful leave) and
// bumps the epoch. Removing an absent slave is not an error; removing one
// that another token holds fails with ErrLeaseLost.
func (r *Registry) Deregister(ctx context.Context, id int, token string) error {
	keys := []string{r.keys.Leases(), r.keys.Info(), r.keys.Epoch()}
	if err := deregisterScript.Run(ctx, r.rdb, keys, id, token).Err(); err != nil {
		return fmt.Errorf("deregister slave %d: %w", id, r.translate(err))
	}
	return nil
}

// translate turns the scripts' error replies into the package's sentinels
// (the codes are those of the Set, scripts.Codes), with what the reply's
// detail says: who holds a taken ID, the slave bound the cluster records.
// Other errors pass through.
func (r *Registry) translate(err error) error {
	code, detail, ok := luascript.ErrorCode(err)
	sentinel, known := scripts.Codes[code]
	if !ok || !known {
		return err
	}
	switch sentinel {
	case ErrIDTaken:
		return takenError(detail)
	case ErrMaxSlavesMismatch:
		return fmt.Errorf("%w: the cluster records %s, this process uses %d (key %s field %s)",
			ErrMaxSlavesMismatch, detail, r.opts.MaxSlaves, r.config, ConfigMaxSlaves)
	}
	return fmt.Errorf("%w: %s", sentinel, detail)
}

// TakenError is the ErrIDTaken of a registration: who holds the ID, and
// until when its lease runs unless renewed.
type TakenError struct {
	// Holder is the registration that holds the ID.
	Holder cluster.NodeInfo
	// Until is the holder's lease deadline.
	Until time.Time
}

// Error says who holds the ID.
func (e *TakenError) Error() string {
	return fmt.Sprintf("%v: held by host %s pid %d since %s", ErrIDTaken, e.Holder.Host, e.Holder.PID,
		e.Holder.StartedAt.Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrIDTaken) hold.
func (e *TakenError) Is(target error) bool { return target == ErrIDTaken }

// takenError parses the IDTAKEN detail: "<deadline ms> <holder info JSON>".
func takenError(detail string) error {
	ms, data, _ := strings.Cut(detail, " ")
	e := &TakenError{}
	if n, err := strconv.ParseInt(ms, 10, 64); err == nil {
		e.Until = time.UnixMilli(n)
	}
	if err := json.Unmarshal([]byte(data), &e.Holder); err != nil {
		return fmt.Errorf("%w: held by %q", ErrIDTaken, data)
	}
	return e
}
