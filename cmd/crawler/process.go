package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/master"
	"github.com/crawler-dev/crawler/slave"
	"github.com/crawler-dev/crawler/store"
)

// itemStore is what the master and the slaves write to.
type itemStore interface {
	slave.ItemStore
	master.FailureRecorder
}

// process is what a master or slave process opens: Redis and the store
// (a JSON Lines file when --output is given, else MongoDB). The slave
// records its items as batches of visits (store.Mongo.SaveVisits: one
// bulk write; store.File.SaveVisits: one group commit).
type process struct {
	rdb   redis.UniversalClient
	store itemStore
	mongo *store.Mongo // nil when writing JSON Lines
	file  *store.File
}

// openProcess connects to Redis and opens the store.
func openProcess(ctx context.Context, cf clusterFlags, mongoURI, output string) (*process, error) {
	rdb, err := openRedis(ctx, cf.redis)
	if err != nil {
		return nil, err
	}
	p := &process{rdb: rdb}
	if output != "" {
		f, err := store.OpenJSONL(output)
		if err != nil {
			rdb.Close()
			return nil, fmt.Errorf("--output: %w", err)
		}
		p.file, p.store = f, f
		return p, nil
	}
	m, err := openMongo(ctx, mongoURI)
	if err != nil {
		rdb.Close()
		return nil, mongoHint(err, "without MongoDB, give --output FILE to write to JSON Lines files instead")
	}
	p.mongo, p.store = m, m
	return p, nil
}

// mongoHint adds what to do instead to the error of a MongoDB that did
// not answer.
func mongoHint(err error, hint string) error {
	if errors.Is(err, store.ErrUnreachable) {
		return fmt.Errorf("%w; %s", err, hint)
	}
	return err
}

// close closes the store, then Redis; a failure to write the file's last
// lines is logged (the tasks they belong to were not acknowledged).
func (p *process) close(log *zap.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if p.mongo != nil {
		if err := p.mongo.Close(ctx); err != nil {
			log.Warn("close mongodb", zap.Error(err))
		}
	}
	if p.file != nil {
		if err := p.file.Close(); err != nil {
			log.Error("close the output file", zap.Error(err))
		}
	}
	p.rdb.Close()
}
