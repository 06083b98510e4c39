package statuspage

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawler-dev/crawler/cluster"
	"github.com/crawler-dev/crawler/politeness"
	"github.com/crawler-dev/crawler/statuspage/feed"
)

// MaxHosts is how many of the busiest hosts a snapshot shows.
const MaxHosts = 8

// Host is one of the busiest hosts: the tasks the slaves hold for it and
// its politeness budget as Redis holds it now.
type Host struct {
	Host string `json:"host"`
	// Held is how many tasks the slaves hold for it (leased, being fetched
	// or waiting for the host).
	Held int `json:"held"`
	// InFlight is the slots of its concurrency cap processes hold now;
	// Holders how many processes hold or want some.
	InFlight int `json:"in_flight"`
	Holders  int `json:"holders"`
	// RateFactor is the share of its rate in use after backoff (1: none).
	RateFactor float64 `json:"rate_factor"`
	// PausedMS is how long it stays paused (a Retry-After), 0 if not.
	PausedMS int64 `json:"paused_ms"`
	// Robots says how its robots.txt stands: "200 fetched 3m ago",
	// "404 (allow all)", "not fetched".
	Robots string `json:"robots"`
}

// busiest sums the hosts the slaves published, keeping the MaxHosts that
// hold the most tasks, with an origin each for its robots.txt.
func busiest(loads map[int]feed.SlaveLoad) ([]Host, map[string]string) {
	held, origins := map[string]int{}, map[string]string{}
	for _, l := range loads {
		for _, h := range l.Hosts {
			held[h.Host] += h.Held
			origins[h.Host] = h.Origin
		}
	}
	hosts := make([]Host, 0, len(held))
	for h, n := range held {
		hosts = append(hosts, Host{Host: h, Held: n})
	}
	slices.SortFunc(hosts, func(a, b Host) int { return cmp.Or(cmp.Compare(b.Held, a.Held), cmp.Compare(a.Host, b.Host)) })
	return hosts[:min(len(hosts), MaxHosts)], origins
}

// readHosts reads the budget and robots.txt state of the busiest hosts.
func (s *RedisSource) readHosts(ctx context.Context, loads map[int]feed.SlaveLoad, now time.Time) ([]Host, error) {
	hosts, origins := busiest(loads)
	for i := range hosts {
		st, err := s.budget.State(ctx, hosts[i].Host)
		if err != nil {
			return hosts, fmt.Errorf("host budgets: %w", err)
		}
		hosts[i].InFlight, hosts[i].Holders, hosts[i].RateFactor = st.Held, st.Holders, st.Factor
		hosts[i].PausedMS = st.Paused.Milliseconds()
		hosts[i].Robots, err = s.robotsState(ctx, origins[hosts[i].Host], now)
		if err != nil {
			return hosts, err
		}
	}
	return hosts, nil
}

// robotsState describes an origin's robots.txt as the cluster holds it.
func (s *RedisSource) robotsState(ctx context.Context, origin string, now time.Time) (string, error) {
	vals, err := s.rdb.HMGet(ctx, s.keys.Robots(origin).File(), cluster.RobotsStatus, cluster.RobotsFetchedAt).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return "", fmt.Errorf("robots.txt of %s: %w", origin, err)
	}
	if len(vals) < 2 || vals[0] == nil {
		return "not fetched", nil
	}
	status, _ := strconv.Atoi(fmt.Sprint(vals[0]))
	at, _ := strconv.ParseInt(fmt.Sprint(vals[1]), 10, 64)
	when := ""
	if at > 0 {
		when = " " + ago(time.UnixMilli(at), now)
	}
	switch {
	case status == 0:
		return "unreachable" + when, nil
	case status >= 200 && status < 300:
		return strconv.Itoa(status) + " fetched" + when, nil
	case status >= 400 && status < 500:
		return strconv.Itoa(status) + " (allow all)" + when, nil
	}
	return strconv.Itoa(status) + when, nil
}

// newBudget is the politeness budget the hosts are read from.
func newBudget(rdb redis.UniversalClient, keys cluster.Keys) (*politeness.Budget, error) {
	o := politeness.DefaultOptions()
	o.Keys = keys
	return politeness.New(rdb, o)
}
