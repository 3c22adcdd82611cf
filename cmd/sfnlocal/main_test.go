package main

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
)

func TestRun_ServesTheAPI(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-addr", "127.0.0.1:0"}, pw) }()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "sfnlocal listening on ")
	if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("printed %q", line)
	}
	client := sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String(url),
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")})
	out, err := client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
		Name: aws.String("hello"), RoleArn: aws.String("arn:aws:iam::123456789012:role/r"),
		Definition: aws.String(`{"StartAt":"Hi","States":{"Hi":{"Type":"Succeed","OutputPath":"$.greeting"}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: out.StateMachineArn, Input: aws.String(`{"greeting":"hello"}`)})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		d, err := client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: ex.ExecutionArn})
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != "RUNNING" {
			if aws.ToString(d.Output) != `"hello"` {
				t.Errorf("output %s", aws.ToString(d.Output))
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("execution did not finish")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestRun_BadFlag(t *testing.T) {
	if err := run(context.Background(), []string{"-nope"}, io.Discard); err == nil {
		t.Error("accepted an unknown flag")
	}
}
