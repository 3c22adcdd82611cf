package apigw

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/myriarch/myriarch/local/localcloud/cfn"
)

// restAPI is the REST API of a template, as the front serves it.
type restAPI struct {
	id, stage      string
	stageVariables map[string]string // nil when the stage has none
	binaryTypes    []string          // BinaryMediaTypes
	// minCompressionBytes is MinimumCompressionSize; -1 when compression
	// is off (the property unset).
	minCompressionBytes int
	root                *resource
	responses           responseSet
	limiter             *rate.Limiter // the stage's throttling; nil: none
}

// method is an AWS::ApiGateway::Method with its AWS_PROXY integration.
type method struct {
	functionArn string
	authorizer  *authorizer // nil: AuthorizationType NONE
	timeout     time.Duration
}

// knownTypes are the API Gateway resources the front reads or may ignore
// (a deployment and the account's logging role change nothing here).
var knownTypes = map[string]bool{
	"AWS::ApiGateway::RestApi": true, "AWS::ApiGateway::Resource": true, "AWS::ApiGateway::Method": true,
	"AWS::ApiGateway::Authorizer": true, "AWS::ApiGateway::Stage": true, "AWS::ApiGateway::GatewayResponse": true,
	"AWS::ApiGateway::Deployment": true, "AWS::ApiGateway::Account": true,
}

// loadAPI builds the REST API from the template's resources; anything it
// would not serve as API Gateway does is an error naming it.
func loadAPI(t *cfn.Template, defaultTimeout time.Duration) (*restAPI, error) {
	if err := onlyKnownTypes(t); err != nil {
		return nil, err
	}
	apis := t.OfType("AWS::ApiGateway::RestApi")
	if len(apis) != 1 {
		return nil, fmt.Errorf("apigw: %d AWS::ApiGateway::RestApi in the template; the front serves exactly one", len(apis))
	}
	a, err := readRestAPI(t, apis[0])
	if err != nil {
		return nil, err
	}
	if err := a.readStage(t); err != nil {
		return nil, err
	}
	auths, err := readAuthorizers(t)
	if err != nil {
		return nil, err
	}
	byID, err := a.readResources(t, apis[0])
	if err != nil {
		return nil, err
	}
	if err := readMethods(t, byID, auths, defaultTimeout); err != nil {
		return nil, err
	}
	a.responses = responseSet{}
	for _, id := range t.OfType("AWS::ApiGateway::GatewayResponse") {
		typ, r, err := parseGatewayResponse(t.Resources[id].Properties)
		if err != nil {
			return nil, fmt.Errorf("apigw: %s: %w", id, err)
		}
		a.responses[typ] = r
	}
	return a, nil
}

func onlyKnownTypes(t *cfn.Template) error {
	ids := make([]string, 0, len(t.Resources))
	for id := range t.Resources {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		typ := t.Resources[id].Type
		if strings.HasPrefix(typ, "AWS::ApiGateway::") && !knownTypes[typ] {
			return fmt.Errorf("apigw: %s: %s is not emulated", id, typ)
		}
	}
	return nil
}

// unsupportedAPIProperties change how API Gateway answers in ways the
// front does not emulate.
var unsupportedAPIProperties = []string{"Body", "BodyS3Location", "CloneFrom", "Policy", "ApiKeySourceType"}

func readRestAPI(t *cfn.Template, id string) (*restAPI, error) {
	props := t.Resources[id].Properties
	for _, p := range unsupportedAPIProperties {
		if _, ok := props[p]; ok {
			return nil, fmt.Errorf("apigw: %s: property %s is not emulated", id, p)
		}
	}
	a := &restAPI{id: t.Physical(id), minCompressionBytes: -1}
	for _, v := range asList(props["BinaryMediaTypes"]) {
		s, _ := v.(string)
		a.binaryTypes = append(a.binaryTypes, strings.ReplaceAll(s, "~1", "/")) // "~1" is the escaped "/" of the API's patch form
	}
	if n, ok := props["MinimumCompressionSize"].(float64); ok {
		a.minCompressionBytes = int(n)
	}
	rootID, err := t.GetAtt(id, "RootResourceId")
	if err != nil {
		return nil, fmt.Errorf("apigw: %s: %w", id, err)
	}
	a.root = &resource{id: rootID, path: "/", methods: map[string]*method{}}
	return a, nil
}

func (a *restAPI) readStage(t *cfn.Template) error {
	stages := t.OfType("AWS::ApiGateway::Stage")
	if len(stages) != 1 {
		return fmt.Errorf("apigw: %d AWS::ApiGateway::Stage in the template; the front serves exactly one", len(stages))
	}
	props := t.Resources[stages[0]].Properties
	a.stage, _ = props["StageName"].(string)
	if a.stage == "" {
		return fmt.Errorf("apigw: %s: no StageName", stages[0])
	}
	lim, err := stageLimiter(props, stages[0])
	if err != nil {
		return err
	}
	a.limiter = lim
	for k, v := range asMap(props["Variables"]) {
		if a.stageVariables == nil {
			a.stageVariables = map[string]string{}
		}
		a.stageVariables[k] = fmt.Sprint(v)
	}
	return nil
}

// readResources builds the path tree: a resource's ParentId is the root's
// id or another resource's Ref.
func (a *restAPI) readResources(t *cfn.Template, apiID string) (map[string]*resource, error) {
	ids := t.OfType("AWS::ApiGateway::Resource")
	byID := map[string]*resource{a.root.id: a.root}
	parentOf := map[*resource]string{}
	for _, id := range ids {
		props := t.Resources[id].Properties
		part, _ := props["PathPart"].(string)
		if err := validPart(part); err != nil {
			return nil, fmt.Errorf("apigw: %s: %w", id, err)
		}
		r := &resource{id: t.Physical(id), part: part, methods: map[string]*method{}}
		byID[r.id] = r
		parentOf[r], _ = props["ParentId"].(string)
	}
	for r, parentID := range parentOf {
		p, ok := byID[parentID]
		if !ok {
			return nil, fmt.Errorf("apigw: resource %s: ParentId %q is neither the root nor a resource", r.part, parentID)
		}
		if kindOf(p.part) == greedyPart {
			return nil, fmt.Errorf("apigw: resource %s under the greedy %s", r.part, p.part)
		}
		p.children = append(p.children, r)
	}
	setPaths(a.root)
	return byID, nil
}

// setPaths gives every resource its full path and orders siblings, so
// that matching is deterministic.
func setPaths(n *resource) {
	sort.Slice(n.children, func(i, j int) bool { return n.children[i].part < n.children[j].part })
	for _, c := range n.children {
		c.path = strings.TrimSuffix(n.path, "/") + "/" + c.part
		setPaths(c)
	}
}

// functionURI is a Lambda integration's (or authorizer's) URI.
var functionURI = regexp.MustCompile(`^arn:[^:]+:apigateway:[^:]+:lambda:path/2015-03-31/functions/(arn:[^/]+)/invocations$`)

func functionOf(uri string) (string, error) {
	m := functionURI.FindStringSubmatch(uri)
	if m == nil {
		return "", fmt.Errorf("URI %q is not a Lambda function's invocations", uri)
	}
	return m[1], nil
}

// unsupportedMethodProperties are method settings that API Gateway would
// act on and the front does not.
var unsupportedMethodProperties = []string{"RequestValidatorId", "RequestModels", "AuthorizationScopes"}

func readMethods(t *cfn.Template, byID map[string]*resource, auths map[string]*authorizer, defaultTimeout time.Duration) error {
	for _, id := range t.OfType("AWS::ApiGateway::Method") {
		if err := readMethod(t.Resources[id].Properties, byID, auths, defaultTimeout); err != nil {
			return fmt.Errorf("apigw: %s: %w", id, err)
		}
	}
	return nil
}

func readMethod(props map[string]any, byID map[string]*resource, auths map[string]*authorizer, defaultTimeout time.Duration) error {
	for _, p := range unsupportedMethodProperties {
		if _, ok := props[p]; ok {
			return fmt.Errorf("property %s is not emulated", p)
		}
	}
	if required, _ := props["ApiKeyRequired"].(bool); required {
		return fmt.Errorf("ApiKeyRequired is not emulated")
	}
	resID, _ := props["ResourceId"].(string)
	res, ok := byID[resID]
	if !ok {
		return fmt.Errorf("ResourceId %q is neither the root nor a resource", resID)
	}
	verb, _ := props["HttpMethod"].(string)
	m := &method{timeout: defaultTimeout}
	switch kind, _ := props["AuthorizationType"].(string); kind {
	case "", "NONE":
	case "CUSTOM":
		authID, _ := props["AuthorizerId"].(string)
		if m.authorizer = auths[authID]; m.authorizer == nil {
			return fmt.Errorf("AuthorizerId %q is no authorizer of the template", authID)
		}
	default:
		return fmt.Errorf("AuthorizationType %s is not emulated (NONE or CUSTOM)", kind)
	}
	integ := asMap(props["Integration"])
	if typ, _ := integ["Type"].(string); typ != "AWS_PROXY" {
		return fmt.Errorf("integration type %q is not emulated (AWS_PROXY only)", typ)
	}
	uri, _ := integ["Uri"].(string)
	fn, err := functionOf(uri)
	if err != nil {
		return err
	}
	m.functionArn = fn
	if ms, ok := integ["TimeoutInMillis"].(float64); ok {
		m.timeout = time.Duration(ms) * time.Millisecond
	}
	res.methods[strings.ToUpper(verb)] = m
	return nil
}

// readAuthorizers reads the authorizers by their Ref, which methods name
// in AuthorizerId.
func readAuthorizers(t *cfn.Template) (map[string]*authorizer, error) {
	out := map[string]*authorizer{}
	for _, id := range t.OfType("AWS::ApiGateway::Authorizer") {
		a, err := readAuthorizer(t.Physical(id), t.Resources[id].Properties)
		if err != nil {
			return nil, fmt.Errorf("apigw: %s: %w", id, err)
		}
		out[a.id] = a
	}
	return out, nil
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
