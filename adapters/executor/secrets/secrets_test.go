package secrets

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

func TestEnvName(t *testing.T) {
	for name, want := range map[string]string{
		"edge-hook":          "MYRIARCH_SECRET_EDGE_HOOK",
		"webhooks/edge-hook": "MYRIARCH_SECRET_WEBHOOKS_EDGE_HOOK",
		"AWX.token@eu":       "MYRIARCH_SECRET_AWX_TOKEN_EU",
	} {
		if got := EnvName(name); got != want {
			t.Errorf("EnvName(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestLocal(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "webhooks"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"webhooks/edge": "from-file\n", "both": "file", "crlf": "windows\r\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	outside := filepath.Join(t.TempDir(), "outside")
	_ = os.WriteFile(outside, []byte("not yours"), 0o600)
	_ = os.Symlink(outside, filepath.Join(dir, "link"))
	env := map[string]string{"MYRIARCH_SECRET_FROM_ENV": "env-value", "MYRIARCH_SECRET_BOTH": "env wins"}
	l := Local{Getenv: func(k string) string { return env[k] }, Dir: dir}
	ctx := context.Background()
	for name, want := range map[string]string{"from-env": "env-value", "webhooks/edge": "from-file", "both": "env wins", "crlf": "windows"} {
		if got, err := l.Secret(ctx, name); err != nil || got != want {
			t.Errorf("Secret(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := l.Secret(ctx, "missing"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "MYRIARCH_SECRET_MISSING") {
		t.Errorf("missing: %v, want ErrNotFound naming the variable", err)
	}
	for _, name := range []string{"../outside", "/etc/passwd", "link"} {
		if v, err := l.Secret(ctx, name); err == nil {
			t.Errorf("Secret(%q) = %q: nothing outside the directory may be read", name, v)
		}
	}
	if _, err := (Local{Getenv: func(string) string { return "" }}).Secret(ctx, "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("without a directory: %v", err)
	}
}

// smServer speaks Secrets Manager's JSON 1.1 protocol for GetSecretValue.
type smServer struct {
	t       *testing.T
	mu      sync.Mutex
	secrets map[string]string
	calls   []string // SecretId of each call
}

func (s *smServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.Method != http.MethodPost || r.Header.Get("X-Amz-Target") != "secretsmanager.GetSecretValue" ||
		r.Header.Get("Content-Type") != "application/x-amz-json-1.1" || !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=AKIDTEST/") {
		s.t.Errorf("request %s %s %v", r.Method, r.URL, r.Header)
	}
	var in struct{ SecretId string }
	if err := json.Unmarshal(body, &in); err != nil {
		s.t.Errorf("body %s: %v", body, err)
	}
	s.mu.Lock()
	s.calls = append(s.calls, in.SecretId)
	v, ok := s.secrets[in.SecretId]
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	if !ok {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"__type":"ResourceNotFoundException","message":"Secrets Manager can't find the specified secret."}`)
		return
	}
	out, _ := json.Marshal(map[string]any{"ARN": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:" + in.SecretId + "-AbCdEf",
		"Name": in.SecretId, "SecretString": v, "VersionId": "v1", "VersionStages": []string{"AWSCURRENT"}, "CreatedDate": 1.7e9})
	_, _ = w.Write(out)
}

func TestSecretsManager(t *testing.T) {
	srv := &smServer{t: t, secrets: map[string]string{"myriarch/test/edge-hook": "signing-key"}}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	cfg := aws.Config{Region: "eu-west-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")}
	client := secretsmanager.NewFromConfig(cfg, func(o *secretsmanager.Options) { o.BaseEndpoint, o.RetryMaxAttempts = aws.String(hs.URL), 1 })
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	sm := NewSecretsManager(client, "myriarch/test/", func() time.Time { return now })
	ctx := context.Background()

	for range 2 {
		if v, err := sm.Secret(ctx, "edge-hook"); err != nil || v != "signing-key" {
			t.Fatalf("Secret = %q, %v", v, err)
		}
	}
	if len(srv.calls) != 1 || srv.calls[0] != "myriarch/test/edge-hook" {
		t.Fatalf("calls %v, want one for myriarch/test/edge-hook (the second read is cached)", srv.calls)
	}
	now = now.Add(DefaultTTL)
	srv.secrets["myriarch/test/edge-hook"] = "rotated"
	if v, err := sm.Secret(ctx, "edge-hook"); err != nil || v != "rotated" || len(srv.calls) != 2 {
		t.Fatalf("after the TTL: %q, %v, %d calls; want the rotated value, read again", v, err, len(srv.calls))
	}
	if _, err := sm.Secret(ctx, "missing"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "myriarch/test/missing") {
		t.Fatalf("missing: %v, want ErrNotFound naming the secret", err)
	}
	if _, err := sm.Secret(ctx, "../x"); err == nil || len(srv.calls) != 3 {
		t.Fatalf("an invalid name: %v after %d calls, want refused before any call", err, len(srv.calls))
	}
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{EnvDir: "/run/secrets"}
	getenv := func(k string) string { return env[k] }
	if l, ok := FromEnv(getenv, aws.Config{}, time.Now).(Local); !ok || l.Dir != "/run/secrets" {
		t.Fatalf("without a prefix: %#v, want the local source", l)
	}
	env[EnvPrefix] = "myriarch/prod/"
	if sm, ok := FromEnv(getenv, aws.Config{Region: "eu-west-1"}, time.Now).(*SecretsManager); !ok || sm.Prefix != "myriarch/prod/" || sm.TTL != DefaultTTL {
		t.Fatalf("with a prefix: %#v, want Secrets Manager", sm)
	}
}
