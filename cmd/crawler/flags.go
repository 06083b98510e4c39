package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crawler-dev/crawler/client"
	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/internal/redact"
)

// clusterFlags are the flags every process of one cluster must agree on.
type clusterFlags struct {
	redis     string
	prefix    string
	maxSlaves int
	// fields maps the option fields of the command's role (master.Options,
	// slave.Options) to their flags: --max-slaves here, the role's own
	// where the command registers them.
	fields fieldFlags
}

func (c *clusterFlags) register(cmd *cobra.Command) {
	c.fields = fieldFlags{}
	f := cmd.Flags()
	f.StringVar(&c.redis, "redis", defaultRedis, "Redis URL: redis://[user:pass@]host:port/db, a Redis Cluster as redis://h1:port,h2:port, or redis+sentinel://h1:26379,h2:26379/mastername")
	f.StringVar(&c.prefix, "prefix", cluster.DefaultPrefix, "prefix of every Redis key of this cluster (the same on every host)")
	f.IntVar(&c.maxSlaves, c.fields.flag("MaxSlaves", "max-slaves"), cluster.DefaultMaxSlaves, "the most slaves the cluster may have: the size of its virtual node table (the same on every host)")
}

func (c *clusterFlags) keys() cluster.Keys { return cluster.Keys{Prefix: c.prefix} }

// command is a crawler command line to suggest to the user, with the
// cluster flags they gave (the password hidden), so that pasting it acts
// on the same cluster: "crawler client reset --redis ... --job news --yes".
// path is the subcommand ("client reset"), args what follows the flags.
func (c *clusterFlags) command(path string, args ...string) string {
	parts := append([]string{"crawler", path}, c.args()...)
	return strings.Join(append(parts, args...), " ")
}

// args are the cluster flags that differ from their defaults.
func (c *clusterFlags) args() []string {
	var out []string
	if c.redis != "" && c.redis != defaultRedis {
		out = append(out, "--redis", shellQuote(redact.URL(c.redis)))
	}
	if c.prefix != cluster.DefaultPrefix {
		out = append(out, "--prefix", shellQuote(c.prefix))
	}
	if c.maxSlaves != 0 && c.maxSlaves != cluster.DefaultMaxSlaves {
		out = append(out, "--max-slaves", strconv.Itoa(c.maxSlaves))
	}
	return out
}

// shellQuote quotes s for a POSIX shell when it holds anything but plain
// characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@,+=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// errNoJob is the error of a client command given no --job.
var errNoJob = errors.New("--job: a job name is required")

// openForJob opens a client of the cluster for a command about one job,
// which --job must name; the caller calls closeRedis.
func (c *clusterFlags) openForJob(ctx context.Context, job string) (cl *client.Client, closeRedis func(), err error) {
	if job == "" {
		return nil, nil, errNoJob
	}
	return c.openClient(ctx)
}

// openClient opens the cluster's Redis and a client of the cluster in it;
// the caller calls closeRedis.
func (c *clusterFlags) openClient(ctx context.Context) (cl *client.Client, closeRedis func(), err error) {
	rdb, err := openRedis(ctx, c.redis)
	if err != nil {
		return nil, nil, err
	}
	cl, err = client.New(rdb, client.Options{Keys: c.keys(), MaxSlaves: c.maxSlaves})
	if err != nil {
		rdb.Close()
		return nil, nil, c.fields.name(err)
	}
	return cl, func() { rdb.Close() }, nil
}

// validate checks what the libraries do not: the prefix and max slaves.
func (c *clusterFlags) validate() error {
	switch {
	case c.prefix == "" || len(c.prefix) > 64:
		return fmt.Errorf("--prefix: %q must be 1-64 characters", c.prefix)
	}
	return c.fields.name(cluster.CheckMaxSlaves(c.maxSlaves))
}

// fieldFlags maps the option fields of a library (master.Options.Tick) to
// the flags that set them (--tick), so an error the library reports by
// field reaches the user by flag. Flags are recorded as they are
// registered (flag), so each is named once.
type fieldFlags map[string]string

// flag records that the flag sets the option field and returns the flag's
// name, for the call that registers it:
//
//	f.DurationVar(&o.Tick, fields.flag("Tick", "tick"), o.Tick, "...")
func (m fieldFlags) flag(field, flag string) string {
	m[field] = flag
	return flag
}

// name rewrites a *cluster.FieldError into the flag's terms; other errors
// pass through.
func (m fieldFlags) name(err error) error {
	var fe *cluster.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	flag, ok := m[fe.Field]
	if !ok {
		return err
	}
	return fmt.Errorf("--%s: %v %s", flag, fe.Value, fe.Problem)
}
