package setup

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/myriarch/myriarch/adapters/executor/secrets"
	"github.com/myriarch/myriarch/adapters/executor/webhook"
)

// The deployment's executors: the built-in ones and webhook, whose
// secrets come from Secrets Manager only with a prefix.
func TestExecutors(t *testing.T) {
	env := map[string]string{secrets.EnvDir: "/run/secrets"}
	getenv := func(k string) string { return env[k] }
	reg := Executors(getenv, aws.Config{}, nil, time.Now, nil)
	for _, name := range []string{"manual", "updater", "webhook"} {
		if _, err := reg.For(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	w := reg["webhook"].(webhook.Executor)
	if l, ok := w.Secrets.(secrets.Local); !ok || l.Dir != "/run/secrets" || w.Sleep == nil || w.Now == nil {
		t.Errorf("webhook executor %#v, want the local secrets and the clock", w)
	}
	env[secrets.EnvPrefix] = "myriarch/prod/"
	if _, ok := Executors(getenv, aws.Config{Region: "eu-west-1"}, nil, time.Now, nil)["webhook"].(webhook.Executor).Secrets.(*secrets.SecretsManager); !ok {
		t.Error("with MYRIARCH_SECRETS_PREFIX the secrets come from Secrets Manager")
	}
}
