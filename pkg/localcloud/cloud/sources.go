package cloud

import (
	"context"

	"github.com/myriarch/myriarch/pkg/localcloud/cfn"
	"github.com/myriarch/myriarch/pkg/localcloud/lambdas"
)

func (c *Cloud) eventSources(runCtx context.Context, t *cfn.Template, rt *lambdas.Runtime, localStreams map[string]string, proxyURL string) error {
	return nil
}

func (c *Cloud) schedules(runCtx context.Context, t *cfn.Template, rt *lambdas.Runtime) error {
	return nil
}
