package esm

import (
	"encoding/json"
	"time"

	"github.com/myriarch/myriarch/local/localcloud/lambdas"
)

// failureMessage is what Lambda sends to a stream mapping's on-failure
// destination for a batch it gives up on: where the records are in the
// stream, not the records themselves.
type failureMessage struct {
	RequestContext struct {
		RequestID              string `json:"requestId"`
		FunctionARN            string `json:"functionArn"`
		Condition              string `json:"condition"`
		ApproximateInvokeCount int    `json:"approximateInvokeCount"`
	} `json:"requestContext"`
	ResponseContext *struct {
		StatusCode      int    `json:"statusCode"`
		ExecutedVersion string `json:"executedVersion"`
		FunctionError   string `json:"functionError,omitempty"`
	} `json:"responseContext,omitempty"`
	Version   string        `json:"version"`
	Timestamp string        `json:"timestamp"`
	BatchInfo ddbStreamInfo `json:"DDBStreamBatchInfo"`
}

type ddbStreamInfo struct {
	ShardID                         string `json:"shardId"`
	StartSequenceNumber             string `json:"startSequenceNumber"`
	EndSequenceNumber               string `json:"endSequenceNumber"`
	ApproximateArrivalOfFirstRecord string `json:"approximateArrivalOfFirstRecord"`
	ApproximateArrivalOfLastRecord  string `json:"approximateArrivalOfLastRecord"`
	BatchSize                       int    `json:"batchSize"`
	StreamARN                       string `json:"streamArn"`
}

const isoMillis = "2006-01-02T15:04:05.000Z"

// describeFailure builds the on-failure message of a batch; last is the
// last invocation's result (nil when the batch expired before one).
func (m Mapping) describeFailure(b batch, condition, requestID string, last *lambdas.Result, now time.Time) json.RawMessage {
	var msg failureMessage
	msg.RequestContext.RequestID = requestID
	msg.RequestContext.FunctionARN = m.FunctionARN
	msg.RequestContext.Condition = condition
	msg.RequestContext.ApproximateInvokeCount = b.invokes
	if last != nil {
		msg.ResponseContext = &struct {
			StatusCode      int    `json:"statusCode"`
			ExecutedVersion string `json:"executedVersion"`
			FunctionError   string `json:"functionError,omitempty"`
		}{StatusCode: 200, ExecutedVersion: "$LATEST", FunctionError: last.FunctionError}
	}
	msg.Version = "1.0"
	msg.Timestamp = now.UTC().Format(isoMillis)
	first, lastRec := b.records[0], b.records[len(b.records)-1]
	msg.BatchInfo = ddbStreamInfo{
		ShardID:                         first.shard,
		StartSequenceNumber:             first.seq,
		EndSequenceNumber:               lastRec.seq,
		ApproximateArrivalOfFirstRecord: first.created.UTC().Format(isoMillis),
		ApproximateArrivalOfLastRecord:  lastRec.created.UTC().Format(isoMillis),
		BatchSize:                       len(b.records),
		StreamARN:                       m.StreamARN,
	}
	out, _ := json.Marshal(msg)
	return out
}
