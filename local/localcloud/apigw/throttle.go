package apigw

import (
	"fmt"

	"golang.org/x/time/rate"

	"github.com/myriarch/myriarch/local/localcloud/cfn"
)

// throttled is API Gateway's 429 when the stage's token bucket is empty.
func throttled() failure {
	return failure{typ: "THROTTLED", status: 429, message: msg("Too Many Requests"), errorType: "TooManyRequestsException"}
}

// stageLimiter is the stage's throttling, a token bucket as API Gateway's:
// ThrottlingRateLimit requests a second, ThrottlingBurstLimit at once, from
// the MethodSettings entry for every method ("/*", "*"). nil: the stage
// sets none. A setting for one method only is refused: the front does not
// keep buckets per method.
func stageLimiter(stage cfn.Props, id string) (*rate.Limiter, error) {
	settings, _ := stage["MethodSettings"].([]any)
	var lim *rate.Limiter
	for _, s := range settings {
		m, _ := s.(map[string]any)
		ms := cfn.Props(m)
		if ms["ThrottlingRateLimit"] == nil && ms["ThrottlingBurstLimit"] == nil {
			continue
		}
		if ms.Str("ResourcePath") != "/*" || ms.Str("HttpMethod") != "*" {
			return nil, fmt.Errorf("apigw: %s: throttling of %s %s alone is not emulated (only the stage's, /* and *)", id, ms.Str("HttpMethod"), ms.Str("ResourcePath"))
		}
		lim = rate.NewLimiter(rate.Limit(ms.Num("ThrottlingRateLimit", 10000)), int(ms.Num("ThrottlingBurstLimit", 5000)))
	}
	return lim, nil
}
