package cloud

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/myriarch/myriarch/local/localcloud/cfn"
	"github.com/myriarch/myriarch/local/localcloud/esm"
	"github.com/myriarch/myriarch/local/localcloud/lambdas"
	"github.com/myriarch/myriarch/local/localcloud/schedule"
)

// eventSources polls each mapping's stream with the function role's
// credentials, through the IAM proxy, as Lambda's pollers do.
// localStreams are DynamoDB Local's stream ARNs by table logical id.
func (c *Cloud) eventSources(runCtx context.Context, t *cfn.Template, rt *lambdas.Runtime, localStreams map[string]string, proxyURL string) error {
	maps, err := esm.MappingsFrom(t)
	if err != nil {
		return err
	}
	byTemplateArn := map[string]string{}
	for _, local := range localStreams {
		byTemplateArn[templateStreamArn(local, Region, Account)] = local
	}
	for _, m := range maps {
		cfg := aws.Config{Region: Region, Credentials: credentials.NewStaticCredentialsProvider(m.RoleLogicalID, "local", "")}
		client := dynamodbstreams.NewFromConfig(cfg, func(op *dynamodbstreams.Options) { op.BaseEndpoint = aws.String(proxyURL) })
		ready := make(chan struct{})
		p := &esm.Poller{Mapping: m, Streams: client, Invoke: rt.Invoke, Log: c.o.Log, Now: c.o.Clock,
			ReadARN: byTemplateArn[m.StreamARN], Ready: ready,
			Failures: func(id string, rec json.RawMessage) {
				c.o.Log.Error("cloud: a stream batch went to its on-failure destination", "mapping", id, "record", string(rec))
				c.failed.Add(1)
			}}
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			if err := p.Run(runCtx); err != nil {
				c.o.Log.Error("cloud: event source mapping stopped", "mapping", m.LogicalID, "error", err.Error())
			}
		}()
		// Positioned before anything writes (StartingPosition LATEST).
		wait, cancel := context.WithTimeout(runCtx, 30*time.Second)
		select {
		case <-ready:
		case <-wait.Done():
		}
		cancel()
		if wait.Err() == context.DeadlineExceeded {
			return fmt.Errorf("event source mapping %s: its stream was not positioned within 30 s (see the log)", m.LogicalID)
		}
	}
	return nil
}

// schedules fires the template's scheduled rules.
func (c *Cloud) schedules(runCtx context.Context, t *cfn.Template, rt *lambdas.Runtime) error {
	rules, err := schedule.RulesFrom(t)
	if err != nil {
		return err
	}
	s := &schedule.Scheduler{Rules: rules, Account: Account, Region: Region, InvokeAsync: rt.InvokeAsync,
		Every: c.o.ScheduleEvery, Now: c.o.Clock, Log: c.o.Log}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		if err := s.Run(runCtx); err != nil && runCtx.Err() == nil {
			c.o.Log.Error("cloud: schedules stopped", "error", err.Error())
		}
	}()
	return nil
}
