package main

import (
	"fmt"
	"net/http"

	"go.uber.org/zap"

	"github.com/crawler-dev/crawler/api"
	"github.com/crawler-dev/crawler/client"
)

// masterAPI builds the master's HTTP API (served by the status page under
// /api/v1/) and, with --api-tokens, the service that reads the token file
// again on SIGHUP. Without --http there is no API, and --api-tokens is an
// error.
func masterAPI(p *process, c masterConfig, log *zap.Logger) (http.Handler, service, error) {
	if c.http == "" {
		if c.apiTokens != "" {
			return nil, nil, fmt.Errorf("--api-tokens: the API is served on the status page's address: give --http too")
		}
		return nil, nil, nil
	}
	cl, err := client.New(p.rdb, client.Options{Keys: c.cf.keys(), MaxSlaves: c.cf.maxSlaves})
	if err != nil {
		return nil, nil, c.cf.fields.name(err)
	}
	deps := api.Deps{Client: cl, Items: p.mongo}
	var reload service
	if c.apiTokens != "" {
		if deps.Tokens, err = api.LoadTokens(c.apiTokens); err != nil {
			return nil, nil, fmt.Errorf("--api-tokens: %w", err)
		}
		reload = reloadTokensOnHangup(deps.Tokens, log)
	}
	opts := api.DefaultOptions()
	opts.Logger = log
	h, err := api.New(deps, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("--http: api: %w", err)
	}
	return h, reload, nil
}

// reloadTokensOnHangup returns the service that reads the token file
// again on each SIGHUP; a bad file keeps the tokens in use.
func reloadTokensOnHangup(tokens *api.Tokens, log *zap.Logger) service {
	return reloadOnHangup(log, "api tokens", func() (zap.Field, error) {
		n, err := tokens.Reload()
		return zap.Int("tokens", n), err
	})
}
