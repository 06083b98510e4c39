package master

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/jobspec"
	"github.com/crawler-dev/crawler/ledger"
)

// checkBudget stops the round once it reached the job's max_bytes or
// max_duration (max_pages and max_pages_per_host are kept where pages are
// admitted): what is queued is dropped and counted as skipped for that
// budget, nothing more is admitted, and the round ends as soon as the
// tasks in flight are acknowledged. It costs one read a tick, and only
// for a job with either budget.
func (r *jobRunner) checkBudget(ctx context.Context, round int64) {
	b := r.spec.Budget
	if b.MaxBytes == 0 && b.MaxDuration == 0 {
		return
	}
	reached, err := r.budgetReached(ctx, round)
	if err != nil {
		r.warn(ctx, "read the round's budget", zap.Error(err))
		return
	}
	if reached == "" {
		return
	}
	dropped, err := r.frontier.stopOnBudget(ctx, reached)
	if err != nil {
		r.warn(ctx, "stop the round on its budget", zap.String("budget", reached), zap.Error(err))
		return
	}
	r.log.Info("budget reached: round stopping", zap.Int64("round", round), zap.String("budget", reached),
		zap.Int64("tasks_dropped", dropped))
}

// budgetReached reads the round's bytes and start and names the budget
// (max_bytes, max_duration) they reached, or "" for none, or when the
// round was stopped on one already.
func (r *jobRunner) budgetReached(ctx context.Context, round int64) (string, error) {
	pipe := r.m.deps.Redis.Pipeline()
	state := pipe.HMGet(ctx, r.keys.State(), cluster.StateStartedAt, cluster.StateBudgetReached)
	bytes := pipe.HGet(ctx, r.keys.Stats(), cluster.RoundStat(cluster.StatBytes, round))
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return "", fmt.Errorf("read budget of round %d: %w", round, err)
	}
	vals := state.Val()
	if len(vals) != 2 {
		return "", fmt.Errorf("read budget of round %d: unexpected reply %v", round, vals)
	}
	if done, _ := vals[1].(string); done == jobspec.BudgetMaxBytes || done == jobspec.BudgetMaxDuration {
		return "", nil
	}
	b := r.spec.Budget
	if n, _ := strconv.ParseInt(bytes.Val(), 10, 64); b.MaxBytes > 0 && n >= b.MaxBytes {
		return jobspec.BudgetMaxBytes, nil
	}
	started, _ := vals[0].(string)
	at, err := time.Parse(time.RFC3339, started)
	if b.MaxDuration > 0 && err == nil && r.m.clock.now().Sub(at) >= b.MaxDuration.Std() {
		return jobspec.BudgetMaxDuration, nil
	}
	return "", nil
}

// stopOnBudget drops the round's queued tasks and list pages, counted as
// skipped for budget, and records it, so that nothing more is admitted
// (the job ledger's cancel step, as ledger.BudgetStopArgs says). It
// returns how many tasks it dropped.
func (f *frontier) stopOnBudget(ctx context.Context, budget string) (int64, error) {
	field := cluster.StatSkippedMaxBytes
	if budget == jobspec.BudgetMaxDuration {
		field = cluster.StatSkippedMaxDuration
	}
	c, err := ledger.ParseCancel(f.runCounting(ctx, cancelScript, ledger.CancelKeys(f.keys, f.maxSlaves, f.bands),
		ledger.BudgetStopArgs(f.clock.now(), budget, field)...))
	if err != nil {
		return 0, fmt.Errorf("stop on budget %s: %w", budget, codes.Translate(err))
	}
	return c.Dropped, nil
}
