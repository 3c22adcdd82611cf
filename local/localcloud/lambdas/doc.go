// Package lambdas runs Lambda functions as the service runs them: each
// execution environment is one AWS Lambda Runtime Interface Emulator (RIE)
// process running the function's own bootstrap, started on first use (a
// cold start) and kept warm. RIE serves one invocation at a time, so a
// function's concurrency is its number of instances, held to its reserved
// concurrency or, without one, to Runtime.MaxInstances (the account's
// concurrency, scaled down); an invocation that finds every instance busy
// at the limit is throttled, as Lambda throttles it.
//
// The service's behaviour that RIE leaves out is added here: a timed-out
// instance is killed and replaced; function errors, timeouts and payload
// limits are reported with the errorType and status codes of the Invoke
// API; asynchronous invocations are queued and retried per the function's
// EventInvokeConfig; Handler serves the Invoke REST API so that the AWS
// SDK's Lambda client works unchanged.
//
// Not emulated: memory limits (MemorySize is only reported to the
// function), versions and aliases other than $LATEST, asynchronous
// destinations, response streaming, and the Init phase's 10 s limit.
package lambdas
