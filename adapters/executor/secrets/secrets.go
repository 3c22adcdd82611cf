// Package secrets reads the secrets that executor objects name (a
// webhook's signing secret, an AWX token): AWS Secrets Manager in the
// cloud, the environment or a directory locally. A secret is never in Git;
// the object holds its name.
package secrets

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
	"github.com/aws/smithy-go"

	"github.com/myriarch/myriarch/core/executor"
	"github.com/myriarch/myriarch/core/executorobject"
)

// The deployment's settings.
const (
	// EnvPrefix is the prefix of the Secrets Manager names: the secret
	// <name> is <prefix><name>, e.g. myriarch/prod/edge-hook for the prefix
	// myriarch/prod/. Set, the secrets come from Secrets Manager.
	EnvPrefix = "MYRIARCH_SECRETS_PREFIX"
	// EnvDir is a directory whose file <name> holds the secret <name>
	// (locally, without EnvPrefix).
	EnvDir = "MYRIARCH_SECRETS_DIR"
	// EnvVarPrefix: the variable MYRIARCH_SECRET_<NAME> holds the secret
	// <name> locally (EnvName).
	EnvVarPrefix = "MYRIARCH_SECRET_"
)

// DefaultTTL is how long Secrets Manager values are kept: a rotated secret
// is used within that time, and a pass that starts a hundred targets reads
// it once.
const DefaultTTL = 5 * time.Minute

// ErrNotFound is wrapped by the error of a secret that no source holds.
var ErrNotFound = errors.New("secret not found")

// FromEnv is the secret source of the deployment: Secrets Manager under
// EnvPrefix when it is set (awsCfg signs the calls), else the environment
// and EnvDir.
func FromEnv(getenv func(string) string, awsCfg aws.Config, now func() time.Time) executor.Secrets {
	if prefix := getenv(EnvPrefix); prefix != "" {
		return NewSecretsManager(secretsmanager.NewFromConfig(awsCfg), prefix, now)
	}
	return Local{Getenv: getenv, Dir: getenv(EnvDir)}
}

// Local reads a secret from the environment variable EnvName(name), else
// from the file <Dir>/<name> (its content less one trailing line break).
type Local struct {
	Getenv func(string) string
	Dir    string
}

var _ executor.Secrets = Local{}

// EnvName is the variable of a secret: MYRIARCH_SECRET_ and the name upper
// case, every character but letters and digits as '_'.
// Example: webhooks/edge-hook → MYRIARCH_SECRET_WEBHOOKS_EDGE_HOOK.
func EnvName(name string) string {
	return EnvVarPrefix + strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z' || r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, name)
}

func (l Local) Secret(_ context.Context, name string) (string, error) {
	if !executorobject.ValidSecretRef(name) {
		return "", fmt.Errorf("secret name %q is not valid", name)
	}
	if l.Getenv != nil {
		if v := l.Getenv(EnvName(name)); v != "" {
			return v, nil
		}
	}
	where := "set " + EnvName(name)
	if l.Dir != "" {
		v, err := readInRoot(l.Dir, name)
		switch {
		case err == nil:
			return v, nil
		case !errors.Is(err, fs.ErrNotExist):
			return "", fmt.Errorf("read secret %q: %w", name, err)
		}
		where += " or write " + l.Dir + "/" + name
	} else {
		where += " (or write it to a file below " + EnvDir + ")"
	}
	return "", fmt.Errorf("%w: %q: %s", ErrNotFound, name, where)
}

// readInRoot reads dir/name without leaving dir (no "..", no link out).
func readInRoot(dir, name string) (string, error) {
	f, err := os.OpenInRoot(dir, name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return "", err
	}
	s := strings.TrimSuffix(string(b), "\n")
	return strings.TrimSuffix(s, "\r"), nil
}

// Map holds secrets by name: for tests, and for a program that reads them
// from somewhere else.
type Map map[string]string

var _ executor.Secrets = Map{}

func (m Map) Secret(_ context.Context, name string) (string, error) {
	if v, ok := m[name]; ok {
		return v, nil
	}
	return "", fmt.Errorf("%w: %q", ErrNotFound, name)
}

// GetSecretValueAPI is the call of Secrets Manager the source makes.
type GetSecretValueAPI interface {
	GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, opts ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

// SecretsManager reads the secret <name> as the Secrets Manager secret
// <Prefix><name> (its current version) and keeps the value for TTL. Safe
// for concurrent use.
type SecretsManager struct {
	Client GetSecretValueAPI
	Prefix string
	TTL    time.Duration
	Now    func() time.Time

	mu    sync.Mutex
	cache map[string]cached
}

type cached struct {
	value string
	until time.Time
}

var _ executor.Secrets = (*SecretsManager)(nil)

// NewSecretsManager is a source with the DefaultTTL.
func NewSecretsManager(c GetSecretValueAPI, prefix string, now func() time.Time) *SecretsManager {
	return &SecretsManager{Client: c, Prefix: prefix, TTL: DefaultTTL, Now: now}
}

func (s *SecretsManager) Secret(ctx context.Context, name string) (string, error) {
	if !executorobject.ValidSecretRef(name) {
		return "", fmt.Errorf("secret name %q is not valid", name)
	}
	id := s.Prefix + name
	now := s.Now()
	s.mu.Lock()
	c, ok := s.cache[id]
	s.mu.Unlock()
	if ok && now.Before(c.until) {
		return c.value, nil
	}
	out, err := s.Client.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(id)})
	if err != nil {
		return "", describe(id, err)
	}
	v := aws.ToString(out.SecretString)
	if out.SecretString == nil {
		v = string(out.SecretBinary)
	}
	s.mu.Lock()
	if s.cache == nil {
		s.cache = map[string]cached{}
	}
	s.cache[id] = cached{value: v, until: now.Add(s.TTL)}
	s.mu.Unlock()
	return v, nil
}

// describe says what a failed read means for whoever deploys Myriarch.
func describe(id string, err error) error {
	var nf *types.ResourceNotFoundException
	var api smithy.APIError
	switch {
	case errors.As(err, &nf):
		return fmt.Errorf("%w: Secrets Manager has no secret %q", ErrNotFound, id)
	case errors.As(err, &api) && api.ErrorCode() == "AccessDeniedException":
		return fmt.Errorf("read secret %q: access denied: the function's role needs secretsmanager:GetSecretValue on it", id)
	}
	return fmt.Errorf("read secret %q from Secrets Manager: %w", id, err)
}
