package cloud

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"sync"

	"github.com/myriarch/myriarch/local/localcloud/cfn"
)

// secrets is Secrets Manager's GetSecretValue for the local cloud: the
// template's secrets (a GenerateSecretString one gets a value generated
// as the service would, once per run), and the secrets an operator creates
// beside the stack (the executors' myriarch/<stage>/<name>), by name.
type secrets struct {
	mu     sync.Mutex
	byName map[string]secret
	region string
	acct   string
}

type secret struct{ arn, name, value string }

func newSecrets(region, account string) *secrets {
	return &secrets{byName: map[string]secret{}, region: region, acct: account}
}

// put adds a secret; arn is empty for one the operator creates (it gets
// the six-character suffix Secrets Manager adds).
func (s *secrets) put(arn, name, value string) {
	if arn == "" {
		arn = fmt.Sprintf("arn:aws:secretsmanager:%s:%s:secret:%s-%s", s.region, s.acct, name, randomString(6, false))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byName[name] = secret{arn: arn, name: name, value: value}
}

// lookup finds a secret by name or ARN (complete, or without its suffix).
func (s *secrets) lookup(id string) (secret, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.byName[id]; ok {
		return v, true
	}
	for _, v := range s.byName {
		if v.arn == id || strings.HasSuffix(v.arn[:len(v.arn)-7], ":secret:"+id) || v.arn[:len(v.arn)-7] == id {
			return v, true
		}
	}
	return secret{}, false
}

// arnOf is the ARN of a secret named or ARN'd by id, for the IAM proxy;
// one that does not exist keeps a form that grants on a name prefix match.
func (s *secrets) arnOf(id string) string {
	if v, ok := s.lookup(id); ok {
		return v.arn
	}
	if strings.HasPrefix(id, "arn:") {
		return id
	}
	return fmt.Sprintf("arn:aws:secretsmanager:%s:%s:secret:%s-XXXXXX", s.region, s.acct, id)
}

// generated is the value of a GenerateSecretString secret: PasswordLength
// characters (32 by default), letters and digits when ExcludePunctuation.
func generated(spec cfn.Props) string {
	punct, _ := spec["ExcludePunctuation"].(bool)
	return randomString(int(spec.Num("PasswordLength", 32)), !punct)
}

func randomString(n int, punctuation bool) string {
	alphabet := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	if punctuation {
		alphabet += "!#$%&()*+,-.:;<=>?@[]^_{|}~"
	}
	b := make([]byte, n)
	for i := range b {
		k, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			panic(err) // crypto/rand does not fail on Linux
		}
		b[i] = alphabet[k.Int64()]
	}
	return string(b)
}

// ServeHTTP answers GetSecretValue (awsJson1_1, X-Amz-Target
// secretsmanager.GetSecretValue); the IAM proxy has already checked the
// caller's grant.
func (s *secrets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-Amz-Target") != "secretsmanager.GetSecretValue" {
		awsError(w, http.StatusBadRequest, "UnknownOperationException", "the local cloud's Secrets Manager answers GetSecretValue only, not "+r.Header.Get("X-Amz-Target"))
		return
	}
	var in struct{ SecretId string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		awsError(w, http.StatusBadRequest, "InvalidRequestException", err.Error())
		return
	}
	v, ok := s.lookup(in.SecretId)
	if !ok {
		awsError(w, http.StatusBadRequest, "ResourceNotFoundException", "Secrets Manager can't find the specified secret.")
		return
	}
	writeJSON(w, map[string]any{"ARN": v.arn, "Name": v.name, "SecretString": v.value, "VersionId": "local-1", "VersionStages": []string{"AWSCURRENT"}, "CreatedDate": 0})
}

// awsError is an error in the awsJson protocols, which aws-sdk-go-v2 reads
// from the __type of the body.
func awsError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-ErrorType", code)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": code, "message": msg})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_ = json.NewEncoder(w).Encode(v)
}
