// Command ddbwrites measures how many conditional single-item writes per
// second DynamoDB Local sustains at a given number of writes in flight, to
// tell whether a wave's SetDesiredHash is bound by the emulator or by our
// code (docs/scale.md, "A wave of 1,000"). For each concurrency it writes
// each of -n items once with UpdateItem on the condition of its version
// counter (what the store's agent writes do: read, then a write guarded by
// the counter it read), over an HTTP client that keeps as many idle
// connections as there are writes in flight, and once more over the SDK's
// default client (10 idle connections per host), and once in transactions
// of 100 conditional updates.
//
// Run it with `make ddbwrites`, which starts DynamoDB Local around it; it
// refuses to run without AWS_ENDPOINT_URL_DYNAMODB.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/aws/aws-sdk-go-v2/aws"
)

func main() {
	n := flag.Int("n", 1000, "items written per run (one write each)")
	levels := flag.String("concurrency", "1,8,32,64,128", "writes in flight, comma-separated")
	flag.Parse()
	if os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") == "" {
		log.Fatal("AWS_ENDPOINT_URL_DYNAMODB is unset: run `make ddbwrites` (DynamoDB Local)")
	}
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	check(err)
	var b [4]byte
	_, _ = rand.Read(b[:])
	table := "ddbwrites-" + hex.EncodeToString(b[:])
	admin := client(cfg, 0)
	_, err = admin.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: &table, BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}}})
	check(err)
	defer func() { _, _ = admin.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: &table}) }()
	// Items about the size of an agent item (~1 KB).
	pad := strings.Repeat("x", 900)
	check(forEach(*n, 32, func(i int) error {
		_, err := admin.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: map[string]types.AttributeValue{
			"id": &types.AttributeValueMemberS{Value: key(i)}, "v": &types.AttributeValueMemberN{Value: "1"},
			"pad": &types.AttributeValueMemberS{Value: pad}}})
		return err
	}))
	version := int64(1)
	fmt.Printf("%-12s %-22s %10s %12s %12s\n", "in flight", "client", "writes/s", "mean ms", "total s")
	for _, f := range strings.Split(*levels, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(f))
		check(err)
		for _, idle := range []int{c, 0} {
			name := fmt.Sprintf("%d idle conns", c)
			if idle == 0 {
				name = "SDK default (10 idle)"
			}
			db := client(cfg, idle)
			var busy atomic.Int64
			start := time.Now()
			check(forEach(*n, c, func(i int) error {
				t := time.Now()
				_, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &table,
					Key:                       map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: key(i)}},
					UpdateExpression:          aws.String("SET #v = :next, desiredHash = :h"),
					ConditionExpression:       aws.String("#v = :v"),
					ExpressionAttributeNames:  map[string]string{"#v": "v"},
					ExpressionAttributeValues: map[string]types.AttributeValue{":v": num(version), ":next": num(version + 1), ":h": &types.AttributeValueMemberS{Value: "h" + strconv.FormatInt(version, 10)}}})
				busy.Add(int64(time.Since(t)))
				return err
			}))
			total := time.Since(start)
			version++
			fmt.Printf("%-12d %-22s %10.0f %12.1f %12.2f\n", c, name, float64(*n)/total.Seconds(),
				float64(busy.Load())/float64(*n)/1e6, total.Seconds())
		}
		// The same writes in transactions of 100 conditional updates (what
		// the store's updateAgents does), c/8 transactions in flight (at least 1).
		db, tx := client(cfg, c), max(c/8, 1)
		chunks := (*n + 99) / 100
		start := time.Now()
		check(forEach(chunks, tx, func(k int) error {
			var items []types.TransactWriteItem
			for i := k * 100; i < min((k+1)*100, *n); i++ {
				items = append(items, types.TransactWriteItem{Update: &types.Update{TableName: &table,
					Key:                       map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: key(i)}},
					UpdateExpression:          aws.String("SET #v = :next, desiredHash = :h"),
					ConditionExpression:       aws.String("#v = :v"),
					ExpressionAttributeNames:  map[string]string{"#v": "v"},
					ExpressionAttributeValues: map[string]types.AttributeValue{":v": num(version), ":next": num(version + 1), ":h": &types.AttributeValueMemberS{Value: "h" + strconv.FormatInt(version, 10)}}}})
			}
			_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
			return err
		}))
		total := time.Since(start)
		version++
		fmt.Printf("%-12s %-22s %10.0f %12s %12.2f\n", fmt.Sprintf("%d tx", tx), "transactions of 100", float64(*n)/total.Seconds(), "", total.Seconds())
	}
}

// client is a DynamoDB client keeping idle connections per host (0: the
// SDK's default transport).
func client(cfg aws.Config, idle int) *dynamodb.Client {
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.DisableValidateResponseChecksum = true // DynamoDB Local omits x-amz-crc32 on errors
		if idle > 0 {
			o.HTTPClient = awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) { t.MaxIdleConnsPerHost = idle })
		}
	})
}

func forEach(n, workers int, f func(i int) error) error {
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return first
}

func key(i int) string { return fmt.Sprintf("agent-%05d", i) }

func num(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
