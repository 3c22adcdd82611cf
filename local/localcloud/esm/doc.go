// Package esm runs the template's DynamoDB stream event source mappings as
// Lambda runs them: it reads each shard of the stream, keeps the records
// that match the mapping's filters, and invokes the function with the
// event Lambda builds (aws-lambda-go's events.DynamoDBEvent), a batch at a
// time: up to BatchSize records gathered for up to the batching window,
// the records of one item in order, in Parallelization lanes per shard
// chosen by a hash of the item's key. A failed batch is retried (from the
// first failed record with ReportBatchItemFailures, in halves with
// BisectBatchOnFunctionError) until MaxRetries or MaxRecordAge, and then
// described to the on-failure destination and skipped.
//
// Not emulated: tumbling windows, filters other than exact values
// (refused when the template is read), and the other event sources (SQS,
// Kinesis, Kafka).
package esm
