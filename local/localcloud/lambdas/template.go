package lambdas

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/myriarch/myriarch/local/localcloud/cfn"
)

// FunctionsFrom reads every AWS::Lambda::Function of the template, with
// its AWS::Lambda::EventInvokeConfig. Each function's code is the
// bootstrap of its asset directory, which must be an executable for this
// machine: the template declares arm64 (the deployed architecture), and
// the local cloud runs the assets built for the host instead.
func FunctionsFrom(t *cfn.Template) ([]Function, error) {
	var fns []Function
	var errs []error
	for _, id := range t.OfType("AWS::Lambda::Function") {
		fn, err := functionFrom(t, id)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fns = append(fns, fn)
	}
	if err := applyInvokeConfigs(t, fns); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return fns, nil
}

func functionFrom(t *cfn.Template, id string) (Function, error) {
	p := cfn.Props(t.Resources[id].Properties)
	fn := Function{LogicalID: id, Name: t.Physical(id), ARN: t.Arn(id), ReservedConcurrency: -1, Async: DefaultAsync()}
	fail := func(format string, args ...any) (Function, error) {
		return Function{}, fmt.Errorf("function %s (%s): %s", id, fn.Name, fmt.Sprintf(format, args...))
	}
	if h := p.Str("Handler"); h != "bootstrap" {
		return fail("Handler %q: the local cloud runs custom runtimes only (Handler bootstrap)", h)
	}
	if r := p.Str("Runtime"); !strings.HasPrefix(r, "provided") {
		return fail("Runtime %q: the local cloud runs custom runtimes only (provided.*)", r)
	}
	key := p.Obj("Code").Str("S3Key")
	hash, ok := strings.CutSuffix(key, ".zip")
	if !ok || hash == "" {
		return fail("Code.S3Key %q is not a CDK file asset (<hash>.zip)", key)
	}
	dir, err := filepath.Abs(filepath.Join(t.Dir, "asset."+hash))
	if err != nil {
		return fail("%v", err)
	}
	fn.Bootstrap = filepath.Join(dir, "bootstrap")
	if err := checkBootstrap(fn.Bootstrap); err != nil {
		return fail("%v", err)
	}
	role, ok := t.LogicalIDOf(p.Str("Role"))
	if !ok {
		return fail("Role %q is no role of the template", p.Str("Role"))
	}
	fn.RoleLogicalID = role
	fn.Env = map[string]string{}
	for k, v := range p.Obj("Environment").Obj("Variables") {
		fn.Env[k] = fmt.Sprint(v)
	}
	fn.Timeout = time.Duration(p.Num("Timeout", defaultTimeout.Seconds()) * float64(time.Second))
	fn.MemoryMB = int(p.Num("MemorySize", defaultMemoryMB))
	fn.ReservedConcurrency = int(p.Num("ReservedConcurrentExecutions", -1))
	return fn, nil
}

// applyInvokeConfigs sets each function's Async from the
// EventInvokeConfig whose FunctionName is its name or ARN.
func applyInvokeConfigs(t *cfn.Template, fns []Function) error {
	var errs []error
	for _, id := range t.OfType("AWS::Lambda::EventInvokeConfig") {
		p := cfn.Props(t.Resources[id].Properties)
		i := indexOf(fns, p.Str("FunctionName"))
		fn, known := t.LogicalIDOf(p.Str("FunctionName"))
		switch {
		case i < 0 && known && t.Resources[fn].Type == "AWS::Lambda::Function":
			// Its function is refused, with its own error.
		case i < 0:
			errs = append(errs, fmt.Errorf("event invoke config %s: no function %q", id, p.Str("FunctionName")))
		case p.Str("Qualifier") != "$LATEST":
			errs = append(errs, fmt.Errorf("event invoke config %s: Qualifier %q: the local cloud runs $LATEST only", id, p.Str("Qualifier")))
		case p["DestinationConfig"] != nil:
			errs = append(errs, fmt.Errorf("event invoke config %s: DestinationConfig is not emulated", id))
		default:
			fns[i].Async = AsyncConfig{
				MaxRetries:  int(p.Num("MaximumRetryAttempts", defaultMaxRetries)),
				MaxEventAge: time.Duration(p.Num("MaximumEventAgeInSeconds", defaultMaxEventAge.Seconds())) * time.Second,
			}
		}
	}
	return errors.Join(errs...)
}

// indexOf finds a function by name or ARN (a qualified ARN included).
func indexOf(fns []Function, nameOrARN string) int {
	for i, fn := range fns {
		if fn.matches(nameOrARN) {
			return i
		}
	}
	return -1
}

// matches says whether a FunctionName parameter names the function: its
// name, its ARN, or its ARN qualified with $LATEST, as the Invoke API
// accepts them.
func (f Function) matches(nameOrARN string) bool {
	return nameOrARN == f.Name || nameOrARN == f.ARN || nameOrARN == f.ARN+":$LATEST"
}
