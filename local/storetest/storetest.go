// Package storetest gives integration tests of other packages a store on
// the DynamoDB Local that `make test` starts, with tables of their own.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/myriarch/myriarch/adapters/store"
)

var (
	once      sync.Once
	client    *dynamodb.Client
	awsConfig aws.Config
	clientErr error
)

// Client is the DynamoDB Local client. Without AWS_ENDPOINT_URL_DYNAMODB the
// test fails: integration tests are part of the suite (run `make test`).
func Client(t testing.TB) *dynamodb.Client {
	t.Helper()
	if os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") == "" {
		if os.Getenv("CI") == "" && os.Getenv("MYRIARCH_UNIT_ONLY") != "" {
			t.Skip("MYRIARCH_UNIT_ONLY: integration tests run with make test")
		}
		t.Fatal("AWS_ENDPOINT_URL_DYNAMODB is unset: this integration test needs DynamoDB Local; run `make test`")
	}
	once.Do(func() {
		cfg, err := config.LoadDefaultConfig(context.Background())
		clientErr, awsConfig = err, cfg
		client = dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.DisableValidateResponseChecksum = true })
	})
	if clientErr != nil {
		t.Fatalf("AWS config: %v", clientErr)
	}
	return client
}

// Config is the AWS configuration of DynamoDB Local (endpoints from the
// environment), for clients of other services such as DynamoDB Streams.
func Config(t testing.TB) aws.Config {
	t.Helper()
	Client(t)
	return awsConfig
}

// New creates the tables under a prefix of the test's own and deletes them
// when the test ends.
func New(t testing.TB) *store.Store {
	st, _ := NewWithTables(t)
	return st
}

// NewWithTables is New, also returning the deployed table names.
func NewWithTables(t testing.TB) (*store.Store, store.Tables) {
	t.Helper()
	c := Client(t)
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
	prefix := fmt.Sprintf("t%s-%.40s-", hex.EncodeToString(b[:]), name)
	if err := store.CreateTables(context.Background(), c, prefix); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := store.DeleteTables(context.Background(), c, prefix); err != nil {
			t.Errorf("delete tables: %v", err)
		}
	})
	names := store.TablesWithPrefix(prefix)
	return store.New(c, names), names
}
