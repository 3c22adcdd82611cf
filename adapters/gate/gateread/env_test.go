package gateread

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

func TestFromEnv(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return t0 }
	cfg := &aws.Config{Region: "eu-west-1", Credentials: credentials.NewStaticCredentialsProvider("a", "b", "")}
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

	r, err := FromEnv(env(nil), nil, now, nil)
	if err != nil || r.Prometheus != nil || r.CloudWatch != nil || r.AlertmanagerURL != "" {
		t.Fatalf("nothing set: %+v %v", r, err)
	}
	r, err = FromEnv(env(map[string]string{EnvPrometheusURL: "http://127.0.0.1:9090", EnvAlertmanagerURL: "http://127.0.0.1:9093"}), cfg, now, nil)
	if err != nil || r.Prometheus == nil || r.AlertmanagerURL != "http://127.0.0.1:9093" || r.CloudWatch == nil {
		t.Fatalf("with providers and a region: %+v %v", r, err)
	}
	r, err = FromEnv(env(map[string]string{EnvCloudWatch: "off"}), cfg, now, nil)
	if err != nil || r.CloudWatch != nil {
		t.Fatalf("CloudWatch off: %+v %v", r, err)
	}
	for name, kv := range map[string]map[string]string{
		"prometheus not a URL":   {EnvPrometheusURL: "localhost:9090"},
		"alertmanager not a URL": {EnvAlertmanagerURL: "ftp://x"},
		"cloudwatch typo":        {EnvCloudWatch: "yes"},
	} {
		if _, err := FromEnv(env(kv), cfg, now, nil); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
	if _, err := FromEnv(env(map[string]string{EnvPrometheusURL: "https://aps.example", EnvPrometheusSigV4Region: "eu-west-1"}), nil, now, nil); err == nil || !strings.Contains(err.Error(), "credentials") {
		t.Errorf("SigV4 without AWS: %v", err)
	}
}
