package store

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// loopbackOnly is a transport that fails the test on any request to a host
// that is not loopback, the instance metadata endpoint above all.
type loopbackOnly struct{ t *testing.T }

func (l loopbackOnly) RoundTrip(r *http.Request) (*http.Response, error) {
	if !Loopback(r.URL.Hostname()) {
		l.t.Errorf("a local run sent %s %s", r.Method, r.URL)
		return nil, errors.New("not loopback")
	}
	return http.DefaultTransport.RoundTrip(r)
}

// cleanAWSEnv leaves the test with no AWS settings but the DynamoDB endpoint:
// no credentials, no region, no shared files.
func cleanAWSEnv(t *testing.T, endpoint string) {
	dir := t.TempDir()
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE",
		"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_EC2_METADATA_DISABLED", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CA_BUNDLE"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv(EnvDynamoDBEndpoint, endpoint)
}

// A local run gets a region and dummy credentials without a request, and
// its DynamoDB calls go to the loopback endpoint only.
func TestAWSConfig_LocalNeverAsksInstanceMetadata(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + ln.Addr().String()
	ln.Close() // a closed port: the call fails fast, but only after signing
	cleanAWSEnv(t, endpoint)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg, err := AWSConfig(ctx, os.Getenv, config.WithHTTPClient(&http.Client{Transport: loopbackOnly{t}}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Region != LocalRegion {
		t.Errorf("region %q, want %q", cfg.Region, LocalRegion)
	}
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil || creds.AccessKeyID == "" {
		t.Fatalf("credentials %+v, %v; want static dummies", creds, err)
	}
	_, _ = dynamodb.NewFromConfig(cfg).ListTables(ctx, &dynamodb.ListTablesInput{}) // may fail; must not leave loopback
}

// Credentials and a region in the environment are kept; the instance
// metadata client stays off.
func TestAWSConfig_LocalKeepsWhatTheEnvironmentSays(t *testing.T) {
	cleanAWSEnv(t, "http://localhost:8000")
	t.Setenv("AWS_ACCESS_KEY_ID", "mine")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_REGION", "eu-west-1")
	ctx := context.Background()
	cfg, err := AWSConfig(ctx, os.Getenv, config.WithHTTPClient(&http.Client{Transport: loopbackOnly{t}}))
	if err != nil {
		t.Fatal(err)
	}
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil || creds.AccessKeyID != "mine" || cfg.Region != "eu-west-1" {
		t.Fatalf("credentials %q, region %q, %v; want the environment's", creds.AccessKeyID, cfg.Region, err)
	}
}

func TestLocal(t *testing.T) {
	for endpoint, want := range map[string]bool{
		"http://127.0.0.1:8000": true, "http://localhost:8000": true, "http://[::1]:8000": true, "http://127.1.2.3": true,
		"": false, "https://dynamodb.eu-west-1.amazonaws.com": false, "http://10.0.0.5:8000": false, "http://dynamodb-local:8000": false,
	} {
		if got := Local(func(string) string { return endpoint }); got != want {
			t.Errorf("Local(%q) = %v, want %v", endpoint, got, want)
		}
	}
}
