package store

import (
	"context"
	"net"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
)

// Settings of local runs against DynamoDB Local. The gateway, the local
// stack and the functions load their AWS configuration here, next to the
// store whose endpoint decides what is local.
const (
	EnvDynamoDBEndpoint = "AWS_ENDPOINT_URL_DYNAMODB"
	LocalRegion         = "us-east-1" // any region does for DynamoDB Local
	localAccessKey      = "local"     // DynamoDB Local accepts any key
)

// AWSConfig loads the AWS default configuration (opts are passed on). A
// local run, one whose DynamoDB endpoint is on a loopback host, never
// consults the EC2 instance metadata endpoint (169.254.169.254): off a
// cloud host the SDK would wait for it to time out, and on one it would
// take the host's role for a local run. So locally the instance metadata
// client is off, the region is LocalRegion unless AWS_REGION or
// AWS_DEFAULT_REGION names one, and without credentials in the
// environment (AWS_ACCESS_KEY_ID, AWS_PROFILE) the credentials are static
// dummies. Elsewhere it is config.LoadDefaultConfig unchanged.
func AWSConfig(ctx context.Context, getenv func(string) string, opts ...func(*config.LoadOptions) error) (aws.Config, error) {
	if Local(getenv) {
		opts = append(opts, config.WithEC2IMDSClientEnableState(imds.ClientDisabled))
		if getenv("AWS_REGION") == "" && getenv("AWS_DEFAULT_REGION") == "" {
			opts = append(opts, config.WithRegion(LocalRegion))
		}
		if getenv("AWS_ACCESS_KEY_ID") == "" && getenv("AWS_PROFILE") == "" {
			opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(localAccessKey, localAccessKey, "")))
		}
	}
	return config.LoadDefaultConfig(ctx, opts...)
}

// Local reports whether the DynamoDB endpoint (AWS_ENDPOINT_URL_DYNAMODB) is
// on a loopback host: localhost, 127.0.0.0/8 or ::1.
func Local(getenv func(string) string) bool {
	u, err := url.Parse(getenv(EnvDynamoDBEndpoint))
	if err != nil || u.Hostname() == "" {
		return false
	}
	return Loopback(u.Hostname())
}

// Loopback reports whether host is localhost or a loopback address.
func Loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
