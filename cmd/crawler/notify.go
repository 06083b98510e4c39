package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"
	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/notify"
)

// webhookFlags are the master's webhook flags.
type webhookFlags struct {
	secretFile   string // --webhook-secret-file
	allowPrivate bool   // --webhook-allow-private-networks
}

func (w *webhookFlags) register(f *pflag.FlagSet) {
	f.StringVar(&w.secretFile, "webhook-secret-file", "", "send the events of jobs' notify lists, signed with the secret in this file (HMAC-SHA256, at least 16 bytes; read again on SIGHUP); empty: webhooks are not sent, their events wait in Redis")
	f.BoolVar(&w.allowPrivate, "webhook-allow-private-networks", false, "let webhooks reach loopback and private addresses (a receiver on the masters' network); link-local and metadata addresses stay refused")
}

// notifier builds the master's webhook sender and the service that reads
// the secret again on SIGHUP; both nil without --webhook-secret-file.
func (w webhookFlags) notifier(p *process, c masterConfig, log *zap.Logger) (service, service, error) {
	if w.secretFile == "" {
		if w.allowPrivate {
			return nil, nil, fmt.Errorf("--webhook-allow-private-networks: webhooks are sent only with --webhook-secret-file")
		}
		return nil, nil, nil
	}
	secret, err := notify.LoadSecret(w.secretFile)
	if err != nil {
		return nil, nil, fmt.Errorf("--webhook-secret-file: %w", err)
	}
	opts := notify.DefaultOptions()
	opts.AllowPrivateNetworks = w.allowPrivate
	n, err := notify.New(opts, notify.Deps{Redis: p.rdb, Keys: c.cf.keys(), Secret: secret, Logger: log})
	if err != nil {
		return nil, nil, err
	}
	reload := reloadOnHangup(log, "webhook secret", func() (zap.Field, error) {
		return zap.Skip(), secret.Reload()
	})
	return n.Run, reload, nil
}

// reloadOnHangup installs a SIGHUP handler at once (a hangup before it
// would end the process) and returns the service that calls reload on
// each one, logging what it read (a field) or why it could not, in which
// case what was read before stays in use.
func reloadOnHangup(log *zap.Logger, what string, reload func() (zap.Field, error)) service {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	return func(ctx context.Context) error {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-hup:
			}
			if read, err := reload(); err != nil {
				log.Error(what+" not reloaded; the previous one stays in use", zap.Error(err))
			} else {
				log.Info(what+" reloaded", read)
			}
		}
	}
}
