// Package sfnlocal is a local AWS Step Functions endpoint: it speaks the service's JSON
// 1.0 API (CreateStateMachine, StartExecution, GetExecutionHistory, SendTaskSuccess, ...)
// so that the real SDK client and the AWS CLI work against it, and it runs Amazon States
// Language definitions (package asl) with Lambda tasks served by Go handlers registered
// in-process.
//
// Embedding:
//
//	clk := sfnlocal.NewFakeClock(t0)                 // or nil for the real clock
//	srv := sfnlocal.New(sfnlocal.Options{Clock: clk})
//	srv.RegisterLambda("engine", handler)            // by name or ARN
//	http.ListenAndServe("127.0.0.1:8083", srv)       // srv is an http.Handler
//
// Time comes from a Clock, so that waits and retry back-off run on a FakeClock in tests: WaitIdle blocks until every running execution waits for time or
// for a task token, and FakeClock.AdvanceToNext moves time to the next timer. Drive does
// both until an execution ends or parks on a task token.
//
// Concurrency: every execution runs in its own goroutine, and each Lambda handler call
// in one of its own; all methods of Server are safe for concurrent use. Executions and their history are kept for the life of the Server.
//
// README.md lists what is supported and what is not.
package sfnlocal
