// Command releases is the release refresh Lambda. Its daily EventBridge
// schedule is off unless the deployment names distributions to refresh
// (setting releaseRefresh); it can also be invoked by hand for a refresh
// now. Each run lists the published releases of every configured
// distribution on GitHub and writes them to the release catalogue with
// source published (core/releases). It never deletes a release and never
// overwrites an administrator's entry.
//
// Environment:
//
//	MYRIARCH_TABLE_PREFIX         the tables' prefix (required)
//	MYRIARCH_RELEASE_REFRESH      the distributions to refresh, comma-separated, each optionally
//	                              =owner/name of its GitHub repository (releases.ParseTargets);
//	                              empty: a run refreshes nothing
//	MYRIARCH_RELEASE_SOURCE_URL   the GitHub REST API (default https://api.github.com)
//	AWS_ENDPOINT_URL_DYNAMODB     a local endpoint
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/myriarch/myriarch/adapters/store"
	"github.com/myriarch/myriarch/core/releases"
)

// Environment variables of the function (infra/functions.go sets them).
const (
	EnvRefresh   = "MYRIARCH_RELEASE_REFRESH"
	EnvSourceURL = "MYRIARCH_RELEASE_SOURCE_URL"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		log.Error("releases: start", "error", err.Error())
		os.Exit(1)
	}
	run, err := build(os.Getenv, dynamodb.NewFromConfig(cfg), log)
	if err != nil {
		log.Error("releases: start", "error", err.Error())
		os.Exit(1)
	}
	lambda.Start(run)
}

// handler runs one refresh; the payload (the schedule's event, or {} by
// hand) is not read.
type handler func(ctx context.Context, payload json.RawMessage) (releases.Result, error)

// build wires the refresh from the environment; a setting that does not
// parse fails the start, so that a bad deployment shows at once.
func build(getenv func(string) string, db *dynamodb.Client, log *slog.Logger) (handler, error) {
	prefix := getenv("MYRIARCH_TABLE_PREFIX")
	if prefix == "" {
		return nil, fmt.Errorf("MYRIARCH_TABLE_PREFIX is not set")
	}
	targets, err := releases.ParseTargets(getenv(EnvRefresh))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvRefresh, err)
	}
	r := releases.Refresher{
		Source: releases.GitHub{BaseURL: getenv(EnvSourceURL)}, // its own client, with a timeout
		Store:  store.New(db, store.TablesWithPrefix(prefix)),
		Clock:  func() time.Time { return time.Now().UTC() },
		Log:    log,
	}
	return func(ctx context.Context, _ json.RawMessage) (releases.Result, error) {
		if len(targets) == 0 {
			log.InfoContext(ctx, "release refresh: no distributions configured", "setting", EnvRefresh)
			return releases.Result{Distributions: []releases.Outcome{}}, nil
		}
		return r.Refresh(ctx, targets)
	}, nil
}
