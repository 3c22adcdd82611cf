package gateread

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
)

// The deployment's settings of the gate readers.
const (
	EnvPrometheusURL = "MYRIARCH_PROMETHEUS_URL"
	// EnvPrometheusSigV4Region signs Prometheus queries with SigV4 for the
	// region (Amazon Managed Service for Prometheus, service "aps").
	EnvPrometheusSigV4Region = "MYRIARCH_PROMETHEUS_SIGV4_REGION"
	EnvAlertmanagerURL       = "MYRIARCH_ALERTMANAGER_URL"
	// EnvCloudWatch turns the CloudWatch readers on ("on") or off ("off").
	// The default is on where AWS is (a region is configured and the
	// process is not local); the local stack has no CloudWatch.
	EnvCloudWatch = "MYRIARCH_CLOUDWATCH"
)

// FromEnv builds the Reader of a deployment from its settings. awsCfg
// signs AMP queries and reads CloudWatch; nil leaves both out.
func FromEnv(getenv func(string) string, awsCfg *aws.Config, now func() time.Time, log *slog.Logger) (Reader, error) {
	r := Reader{Now: now, Log: log, AlertmanagerURL: getenv(EnvAlertmanagerURL)}
	if u := r.AlertmanagerURL; u != "" {
		if err := absoluteURL(EnvAlertmanagerURL, u); err != nil {
			return Reader{}, err
		}
	}
	if u := getenv(EnvPrometheusURL); u != "" {
		if err := absoluteURL(EnvPrometheusURL, u); err != nil {
			return Reader{}, err
		}
		var rt http.RoundTripper
		if region := getenv(EnvPrometheusSigV4Region); region != "" {
			if awsCfg == nil {
				return Reader{}, fmt.Errorf("%s needs AWS credentials", EnvPrometheusSigV4Region)
			}
			rt = &SigV4RoundTripper{Credentials: awsCfg.Credentials, Region: region, Now: now}
		}
		api, err := NewPrometheus(u, rt)
		if err != nil {
			return Reader{}, fmt.Errorf("%s: %w", EnvPrometheusURL, err)
		}
		r.Prometheus = api
	}
	switch v := getenv(EnvCloudWatch); {
	case v == "off":
	case v != "" && v != "on":
		return Reader{}, fmt.Errorf("%s=%q: use on or off", EnvCloudWatch, v)
	case awsCfg != nil && awsCfg.Region != "":
		r.CloudWatch = cloudwatch.NewFromConfig(*awsCfg)
	case v == "on":
		return Reader{}, fmt.Errorf("%s=on needs an AWS region", EnvCloudWatch)
	}
	return r, nil
}

func absoluteURL(env, s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s=%q is not an http(s) URL", env, s)
	}
	return nil
}
