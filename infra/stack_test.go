package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/myriarch/myriarch/pkg/api"
	"github.com/myriarch/myriarch/pkg/store/tables"
)

func TestTables_FromTheStoreDefinition(t *testing.T) {
	s := synthesized(t, nil)
	if got := len(s.ofType("AWS::DynamoDB::Table")); got != len(tables.All()) {
		t.Errorf("%d tables deployed, pkg/store/tables defines %d", got, len(tables.All()))
	}
	for _, def := range tables.All() {
		t.Run(def.Name, func(t *testing.T) {
			_, r := s.table(t, def.Name)
			p := r.Properties
			want := map[string]any{
				"BillingMode":                      "PAY_PER_REQUEST",
				"DeletionProtectionEnabled":        true,
				"PointInTimeRecoverySpecification": map[string]any{"PointInTimeRecoveryEnabled": true},
				"KeySchema":                        keySchema(def.PartitionKey, def.SortKey),
			}
			for k, v := range want {
				if !reflect.DeepEqual(p[k], v) {
					t.Errorf("%s = %v, want %v", k, p[k], v)
				}
			}
			if r.Deletion != "Retain" {
				t.Errorf("DeletionPolicy %q, want Retain", r.Deletion)
			}
			stream, _ := p["StreamSpecification"].(map[string]any)
			if got := fmt.Sprint(stream["StreamViewType"]); (def.Stream != "") != (stream != nil) || (stream != nil && got != string(def.Stream)) {
				t.Errorf("stream %v, definition says %q", stream, def.Stream)
			}
			var gsis []any
			for _, ix := range def.Indexes {
				projection := map[string]any{"ProjectionType": string(ix.Projection)}
				if len(ix.NonKeyAttributes) > 0 {
					var attrs []any
					for _, a := range ix.NonKeyAttributes {
						attrs = append(attrs, a)
					}
					projection["NonKeyAttributes"] = attrs
				}
				gsis = append(gsis, map[string]any{
					"IndexName": ix.Name, "KeySchema": keySchema(ix.PartitionKey, ix.SortKey), "Projection": projection,
				})
			}
			if !reflect.DeepEqual(p["GlobalSecondaryIndexes"], any(gsis)) && !(len(gsis) == 0 && p["GlobalSecondaryIndexes"] == nil) {
				t.Errorf("indexes\n got %v\nwant %v", p["GlobalSecondaryIndexes"], gsis)
			}
		})
	}
}

func keySchema(pk tables.Key, sk *tables.Key) []any {
	out := []any{map[string]any{"AttributeName": pk.Name, "KeyType": "HASH"}}
	if sk != nil {
		out = append(out, map[string]any{"AttributeName": sk.Name, "KeyType": "RANGE"})
	}
	return out
}

func TestTables_DeletionProtectionCanBeSwitchedOff(t *testing.T) {
	s := synthesized(t, variant)
	for _, def := range tables.All() {
		_, r := s.table(t, def.Name)
		if r.Properties["DeletionProtectionEnabled"] != false || r.Deletion != "Delete" {
			t.Errorf("%s: protection %v, DeletionPolicy %q; want off and Delete", def.Name, r.Properties["DeletionProtectionEnabled"], r.Deletion)
		}
	}
}

func TestFunctions_GoOnGraviton(t *testing.T) {
	s := synthesized(t, nil)
	if got := len(s.ofType("AWS::Lambda::Function")); got != len(functionSpecs) {
		t.Errorf("%d functions deployed, want %d (custom resources would add some)", got, len(functionSpecs))
	}
	assets := fileAssets(t, s)
	for _, f := range functionSpecs {
		t.Run(f.Name, func(t *testing.T) {
			_, r := s.function(t, f.Name)
			p := r.Properties
			checks := []struct {
				field string
				got   any
				want  any
			}{
				{"Runtime", p["Runtime"], "provided.al2023"},
				{"Architectures", p["Architectures"], []any{"arm64"}},
				{"Handler", p["Handler"], "bootstrap"},
				{"TracingConfig", p["TracingConfig"], map[string]any{"Mode": "Active"}},
				{"MemorySize", p["MemorySize"], float64(f.MemoryMB)},
				{"Timeout", p["Timeout"], float64(f.TimeoutSeconds)},
				{"table prefix", env(p)[envTablePrefix], "myriarch-test-"},
				{"stage", env(p)[envStage], testStage},
			}
			for _, c := range checks {
				if !reflect.DeepEqual(c.got, c.want) {
					t.Errorf("%s = %v, want %v", c.field, c.got, c.want)
				}
			}
			reserved, has := p["ReservedConcurrentExecutions"]
			if f.ReservedConcurrency > 0 != has || (has && reserved != float64(f.ReservedConcurrency)) {
				t.Errorf("reserved concurrency %v, want %d", reserved, f.ReservedConcurrency)
			}
			key := fmt.Sprint(p["Code"].(map[string]any)["S3Key"])
			src, err := os.ReadFile(filepath.Join(s.outdir, assets[strings.TrimSuffix(key, ".zip")], "bootstrap"))
			if err != nil || string(src) != "synth-only stub of "+f.Name+"\n" {
				t.Errorf("code asset %s does not hold %s's bootstrap: %q %v", key, f.Name, src, err)
			}
		})
	}
}

// The planner is the spec's single writer of rollouts.
func TestFunctions_PlannerIsASingleWriter(t *testing.T) {
	s := synthesized(t, nil)
	_, r := s.function(t, fnPlanner)
	if r.Properties["ReservedConcurrentExecutions"] != float64(1) {
		t.Errorf("planner reserved concurrency %v, want 1", r.Properties["ReservedConcurrentExecutions"])
	}
}

func env(props map[string]any) map[string]any {
	e, _ := props["Environment"].(map[string]any)
	v, _ := e["Variables"].(map[string]any)
	return v
}

// fileAssets maps each file asset's hash to its path in the cloud assembly.
func fileAssets(t *testing.T, s *synthesis) map[string]string {
	t.Helper()
	var manifest struct {
		Files map[string]struct {
			Source struct{ Path string } `json:"source"`
		} `json:"files"`
		DockerImages map[string]struct {
			Source struct {
				Directory, DockerFile string
			} `json:"source"`
		} `json:"dockerImages"`
	}
	raw, err := os.ReadFile(filepath.Join(s.outdir, stackName(s.config)+".assets.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &manifest); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for hash, f := range manifest.Files {
		out[hash] = f.Source.Path
	}
	for hash, d := range manifest.DockerImages {
		out["docker:"+hash] = d.Source.Directory
	}
	return out
}

func TestStateMachine_IsTheFileWithTheEngineSubstituted(t *testing.T) {
	s := synthesized(t, nil)
	sms := s.ofType("AWS::StepFunctions::StateMachine")
	if len(sms) != 1 {
		t.Fatalf("%d state machines, want 1", len(sms))
	}
	engineID, _ := s.function(t, fnEngine)
	for _, sm := range sms {
		p := sm.Properties
		loc := p["DefinitionS3Location"].(map[string]any)
		staged, err := os.ReadFile(filepath.Join(s.outdir, fileAssets(t, s)[strings.TrimSuffix(fmt.Sprint(loc["Key"]), ".json")]))
		if err != nil {
			t.Fatal(err)
		}
		source, err := os.ReadFile(filepath.Join("..", rolloutDefinition))
		if err != nil {
			t.Fatal(err)
		}
		if string(staged) != string(source) {
			t.Errorf("the deployed definition is not %s byte for byte", rolloutDefinition)
		}
		subs := p["DefinitionSubstitutions"].(map[string]any)
		want := map[string]any{"EngineFunctionArn": map[string]any{"Fn::GetAtt": []any{engineID, "Arn"}}}
		if !reflect.DeepEqual(subs, want) {
			t.Errorf("substitutions %v, want %v", subs, want)
		}
		// After substitution the definition is valid JSON in which every
		// task invokes the engine, as Step Functions will see it.
		const engineArn = "arn:aws:lambda:eu-west-1:123456789012:function:myriarch-test-engine"
		var def struct {
			States map[string]struct {
				Type       string
				Parameters struct{ FunctionName string }
			}
		}
		if err := json.Unmarshal([]byte(strings.ReplaceAll(string(source), "${EngineFunctionArn}", engineArn)), &def); err != nil {
			t.Fatalf("definition after substitution: %v", err)
		}
		tasks := 0
		for name, st := range def.States {
			if st.Type == "Task" {
				tasks++
				if st.Parameters.FunctionName != engineArn {
					t.Errorf("state %q invokes %q, want the engine", name, st.Parameters.FunctionName)
				}
			}
		}
		if tasks == 0 {
			t.Error("no Task state in the definition")
		}
		checks := []struct {
			field     string
			got, want any
		}{
			{"name", p["StateMachineName"], "myriarch-test-rollout"},
			{"type", p["StateMachineType"], "STANDARD"},
			{"tracing", p["TracingConfiguration"], map[string]any{"Enabled": true}},
			{"log level", p["LoggingConfiguration"].(map[string]any)["Level"], "ALL"},
			{"execution data", p["LoggingConfiguration"].(map[string]any)["IncludeExecutionData"], true},
		}
		for _, c := range checks {
			if !reflect.DeepEqual(c.got, c.want) {
				t.Errorf("%s = %v, want %v", c.field, c.got, c.want)
			}
		}
	}
}

// The engine and the planner find the state machine by an ARN built from
// its name (no reference, no cycle): it must be the deployed one's.
func TestStateMachine_ArnGivenToFunctionsIsTheDeployedOne(t *testing.T) {
	s := synthesized(t, nil)
	want := "arn:{AWS::Partition}:states:{AWS::Region}:{AWS::AccountId}:stateMachine:myriarch-test-rollout"
	for _, f := range functionSpecs {
		_, r := s.function(t, f.Name)
		got, has := env(r.Properties)[envStateMachineArn]
		if needs := f.StartExecution || f.SendTaskResponse; needs != has || (has && flatten(got) != want) {
			t.Errorf("%s: %s = %v (needs it: %v), want %s", f.Name, envStateMachineArn, flatten(got), needs, want)
		}
	}
}

func TestPlanner_EveryMinute(t *testing.T) {
	s := synthesized(t, nil)
	plannerID, _ := s.function(t, fnPlanner)
	must(t, "schedule", func() {
		s.template.HasResourceProperties(jsii.String("AWS::Events::Rule"), map[string]any{
			"ScheduleExpression": "rate(1 minute)",
			"State":              "ENABLED",
			"Targets":            []any{assertions.Match_ObjectLike(&map[string]any{"Arn": map[string]any{"Fn::GetAtt": []any{plannerID, "Arn"}}})},
		})
	})
}

func TestAgentEvent_ReadsTheAgentsStream(t *testing.T) {
	s := synthesized(t, nil)
	agentsID, _ := s.table(t, tables.Agents.Name)
	fnID, _ := s.function(t, fnAgentEvent)
	must(t, "event source mapping", func() {
		s.template.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			"EventSourceArn":        map[string]any{"Fn::GetAtt": []any{agentsID, "StreamArn"}},
			"FunctionName":          map[string]any{"Ref": fnID},
			"StartingPosition":      "LATEST",
			"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
			"DestinationConfig":     assertions.Match_ObjectLike(&map[string]any{"OnFailure": assertions.Match_AnyValue()}),
		})
	})
	must(t, "no batching window: the engine reacts within about a second", func() {
		s.template.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			"MaximumBatchingWindowInSeconds": assertions.Match_Absent(),
		})
	})
}

func TestAPI_ProxiedBehindTheAuthorizer(t *testing.T) {
	s := synthesized(t, nil)
	apiID, _ := s.function(t, fnAPI)
	authID, _ := s.function(t, fnAuthorizer)
	must(t, "token authorizer", func() {
		s.template.HasResourceProperties(jsii.String("AWS::ApiGateway::Authorizer"), map[string]any{
			"Type":                         "TOKEN",
			"IdentitySource":               "method.request.header.Authorization",
			"AuthorizerResultTtlInSeconds": authorizerCacheSeconds,
		})
	})
	authorizers := s.ofType("AWS::ApiGateway::Authorizer")
	for _, a := range authorizers {
		if !contains(refs(a.Properties["AuthorizerUri"]), authID) {
			t.Errorf("the authorizer does not invoke the authorizer function: %v", refs(a.Properties["AuthorizerUri"]))
		}
	}
	methods := s.ofType("AWS::ApiGateway::Method")
	if len(methods) == 0 {
		t.Fatal("no API methods")
	}
	for id, m := range methods {
		p := m.Properties
		if p["AuthorizationType"] != "CUSTOM" || len(refs(p["AuthorizerId"])) != 1 {
			t.Errorf("method %s: authorization %v %v, want the custom authorizer", id, p["AuthorizationType"], p["AuthorizerId"])
		}
		integration := p["Integration"].(map[string]any)
		if integration["Type"] != "AWS_PROXY" || !contains(refs(integration["Uri"]), apiID) {
			t.Errorf("method %s: integration %v, want a proxy to the api function", id, integration["Type"])
		}
	}
	must(t, "stage: throttling, access logs, tracing", func() {
		s.template.HasResourceProperties(jsii.String("AWS::ApiGateway::Stage"), map[string]any{
			"StageName":        testStage,
			"TracingEnabled":   true,
			"AccessLogSetting": assertions.Match_ObjectLike(&map[string]any{"DestinationArn": assertions.Match_AnyValue(), "Format": assertions.Match_StringLikeRegexp(jsii.String("requestId"))}),
			"MethodSettings": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
				"ThrottlingRateLimit": 50, "ThrottlingBurstLimit": 100, "HttpMethod": "*", "ResourcePath": "/*",
			})}),
		})
	})
	for _, r := range gatewayRefusals() {
		must(t, "problem+json for "+r.status(), func() {
			s.template.HasResourceProperties(jsii.String("AWS::ApiGateway::GatewayResponse"), map[string]any{
				"StatusCode": r.status(),
				"ResponseParameters": assertions.Match_ObjectLike(&map[string]any{
					"gatewayresponse.header.Content-Type":  "'application/problem+json'",
					"gatewayresponse.header.Cache-Control": "'no-store'",
				}),
				"ResponseTemplates": map[string]any{"application/json": r.body()},
			})
		})
		if r.problem.Status == 401 {
			must(t, "a 401 names its scheme", func() {
				s.template.HasResourceProperties(jsii.String("AWS::ApiGateway::GatewayResponse"), map[string]any{
					"StatusCode":         "401",
					"ResponseParameters": assertions.Match_ObjectLike(&map[string]any{"gatewayresponse.header.WWW-Authenticate": `'Bearer realm="myriarch"'`}),
				})
			})
		}
		var problem api.Problem
		if err := json.Unmarshal([]byte(r.body()), &problem); err != nil || problem.Code == "" || problem.Type != "https://myriarch.dev/problems/"+problem.Code {
			t.Errorf("%s: %s is not a problem as the api writes them: %v", r.status(), r.body(), err)
		}
	}
	// The codes are those api/openapi.yaml documents.
	spec, err := os.ReadFile("../api/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range gatewayRefusals() {
		if !strings.Contains(string(spec), "| "+r.status()+" | `"+r.problem.Code+"`") {
			t.Errorf("api/openapi.yaml does not document %s %s", r.status(), r.problem.Code)
		}
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func TestGateway_FargateBehindATLSLoadBalancer(t *testing.T) {
	s := synthesized(t, nil)
	must(t, "service", func() {
		s.template.HasResourceProperties(jsii.String("AWS::ECS::Service"), map[string]any{
			"DesiredCount": 2,
			"LaunchType":   "FARGATE",
			"DeploymentConfiguration": assertions.Match_ObjectLike(&map[string]any{
				"MinimumHealthyPercent":    100,
				"DeploymentCircuitBreaker": map[string]any{"Enable": true, "Rollback": true},
			}),
		})
	})
	must(t, "TLS listener with the certificate parameter", func() {
		s.template.HasResourceProperties(jsii.String("AWS::ElasticLoadBalancingV2::Listener"), map[string]any{
			"Port": 443, "Protocol": "TLS",
			"Certificates": []any{map[string]any{"CertificateArn": map[string]any{"Ref": "GatewayCertificateArn"}}},
		})
	})
	must(t, "certificate parameter", func() {
		s.template.HasParameter(jsii.String("GatewayCertificateArn"), map[string]any{"Type": "String"})
	})
	must(t, "internet-facing network load balancer", func() {
		s.template.HasResourceProperties(jsii.String("AWS::ElasticLoadBalancingV2::LoadBalancer"), map[string]any{
			"Type": "network", "Scheme": "internet-facing",
		})
	})
	must(t, "health check on /healthz", func() {
		s.template.HasResourceProperties(jsii.String("AWS::ElasticLoadBalancingV2::TargetGroup"), map[string]any{
			"Port": gatewayPort, "Protocol": "TCP", "TargetType": "ip",
			"HealthCheckProtocol": "HTTP", "HealthCheckPath": "/healthz", "HealthCheckPort": "8080",
		})
	})
	must(t, "task on Graviton with the token secret", func() {
		s.template.HasResourceProperties(jsii.String("AWS::ECS::TaskDefinition"), map[string]any{
			"RuntimePlatform": map[string]any{"CpuArchitecture": "ARM64", "OperatingSystemFamily": "LINUX"},
			"ContainerDefinitions": []any{assertions.Match_ObjectLike(&map[string]any{
				"Secrets":      []any{assertions.Match_ObjectLike(&map[string]any{"Name": envAgentTokens})},
				"PortMappings": []any{assertions.Match_ObjectLike(&map[string]any{"ContainerPort": gatewayPort}), assertions.Match_ObjectLike(&map[string]any{"ContainerPort": gatewayHealthPort})},
				"Environment": []any{ // in name order
					map[string]any{"Name": "MYRIARCH_GATEWAY_HEALTH_LISTEN", "Value": ":8080"},
					map[string]any{"Name": "MYRIARCH_GATEWAY_LISTEN", "Value": ":4320"},
					map[string]any{"Name": envStage, "Value": testStage},
					map[string]any{"Name": envTablePrefix, "Value": "myriarch-test-"},
				},
				"StopTimeout": gatewayStopSeconds,
			})},
		})
	})
}

// Only the load balancer reaches the tasks, and only on the gateway port.
func TestGateway_TasksReachableOnlyFromTheLoadBalancer(t *testing.T) {
	s := synthesized(t, nil)
	groups := s.ofType("AWS::EC2::SecurityGroup")
	for id, g := range groups {
		for _, rule := range list(g.Properties["SecurityGroupIngress"]) {
			r, _ := rule.(map[string]any)
			if r == nil {
				continue
			}
			if r["CidrIp"] == "0.0.0.0/0" && (r["FromPort"] != float64(443) || r["ToPort"] != float64(443)) {
				t.Errorf("%s opens %v-%v to the internet, only 443 may be", id, r["FromPort"], r["ToPort"])
			}
		}
	}
	var ports []float64
	for _, r := range s.ofType("AWS::EC2::SecurityGroupIngress") {
		if r.Properties["SourceSecurityGroupId"] == nil || r.Properties["FromPort"] != r.Properties["ToPort"] {
			t.Errorf("ingress %v, want one port from the load balancer's group", r.Properties)
		}
		ports = append(ports, r.Properties["FromPort"].(float64))
	}
	sort.Float64s(ports)
	if want := []float64{gatewayPort, gatewayHealthPort}; !reflect.DeepEqual(ports, want) {
		t.Errorf("ports %v reachable from the load balancer, want %v", ports, want)
	}
}

func TestAlarms_ErrorsThrottlesAndFailedExecutions(t *testing.T) {
	s := synthesized(t, nil)
	type key struct{ namespace, metric, dimension string }
	got := map[key]bool{}
	for _, a := range s.ofType("AWS::CloudWatch::Alarm") {
		p := a.Properties
		dims := ""
		for _, d := range list(p["Dimensions"]) {
			if m, ok := d.(map[string]any); ok {
				dims += flatten(m["Value"])
			}
		}
		got[key{fmt.Sprint(p["Namespace"]), fmt.Sprint(p["MetricName"]), dims}] = true
		want := float64(1)
		if plannerID, _ := s.function(t, fnPlanner); p["MetricName"] == "Throttles" && dims == "{"+plannerID+"}" {
			want = plannerCollisions // the api's synchronous runs meet the scheduled one now and then
		}
		if p["Threshold"] != want || p["ComparisonOperator"] != "GreaterThanOrEqualToThreshold" {
			t.Errorf("alarm on %v %s: threshold %v %v, want >= %v", p["MetricName"], dims, p["ComparisonOperator"], p["Threshold"], want)
		}
	}
	smID := ""
	for id := range s.ofType("AWS::StepFunctions::StateMachine") {
		smID = id
	}
	var want []key
	for _, f := range functionSpecs {
		id, _ := s.function(t, f.Name)
		want = append(want, key{"AWS/Lambda", "Errors", "{" + id + "}"}, key{"AWS/Lambda", "Throttles", "{" + id + "}"})
	}
	want = append(want, key{"AWS/States", "ExecutionsFailed", "{" + smID + "}"})
	for _, k := range want {
		if !got[k] {
			t.Errorf("no alarm on %s %s of %s", k.namespace, k.metric, k.dimension)
		}
	}
}

func TestAlarms_NotifyTheConfiguredTopic(t *testing.T) {
	s := synthesized(t, variant)
	for id, a := range s.ofType("AWS::CloudWatch::Alarm") {
		if !reflect.DeepEqual(a.Properties["AlarmActions"], []any{variant["alarmTopicArn"]}) {
			t.Errorf("%s: actions %v, want the topic", id, a.Properties["AlarmActions"])
		}
	}
}

func TestOutputs_WhereAgentsAndOperatorsConnect(t *testing.T) {
	s := synthesized(t, variant)
	must(t, "OpAMP endpoint on the configured domain", func() {
		s.template.HasOutput(jsii.String("OpampEndpoint"), map[string]any{"Value": "wss://opamp.example.com/v1/opamp"})
	})
	var url any
	for _, o := range *s.template.FindOutputs(jsii.String("ApiUrl"), nil) {
		url = (*o)["Value"]
	}
	if got, want := flatten(url), "https://{"+refs(url)[0]+"}.execute-api.{AWS::Region}.{AWS::URLSuffix}/test"; got != want {
		t.Errorf("ApiUrl %s, want %s (myrctl's base URL: no trailing slash)", got, want)
	}
	for _, name := range []string{"ApiUrl", "ApiId", "AgentTokenSecretArn", "RolloutStateMachineArn", "TablePrefix", "GatewayLoadBalancerDns"} {
		must(t, "output "+name, func() { s.template.HasOutput(jsii.String(name), map[string]any{"Value": assertions.Match_AnyValue()}) })
	}
}

// variant overrides every setting that changes the template's shape.
var variant = map[string]string{
	"stage":              testStage,
	"domainName":         "opamp.example.com",
	"certificateArn":     "arn:aws:acm:eu-west-1:123456789012:certificate/0b0b0b0b-1111-2222-3333-444444444444",
	"agentTokenSecret":   "arn:aws:secretsmanager:eu-west-1:123456789012:secret:myriarch/test/agent-tokens-AbCdEf",
	"gatewayImage":       "123456789012.dkr.ecr.eu-west-1.amazonaws.com/myriarch-gateway:1.2.3",
	"gatewayArch":        "x86_64",
	"gatewayTasks":       "3",
	"natGateways":        "1",
	"deletionProtection": "false",
	"alarmTopicArn":      "arn:aws:sns:eu-west-1:123456789012:myriarch-alarms",
	"apiTokens":          tokenTable,
	"releases":           "0.120.0,0.121.0",
	"platforms":          "linux/amd64,linux/arm64",
	"defaultTimezone":    "Europe/Berlin",
}

func TestVariant_ConfigurationReachesTheTemplate(t *testing.T) {
	s := synthesized(t, variant)
	must(t, "configured certificate, no parameter", func() {
		s.template.HasResourceProperties(jsii.String("AWS::ElasticLoadBalancingV2::Listener"), map[string]any{
			"Certificates": []any{map[string]any{"CertificateArn": variant["certificateArn"]}},
		})
	})
	if params := s.template.FindParameters(jsii.String("GatewayCertificateArn"), nil); len(*params) != 0 {
		t.Error("a certificate parameter although certificateArn is set")
	}
	must(t, "published image on x86, three tasks in private subnets", func() {
		s.template.HasResourceProperties(jsii.String("AWS::ECS::TaskDefinition"), map[string]any{
			"RuntimePlatform": map[string]any{"CpuArchitecture": "X86_64", "OperatingSystemFamily": "LINUX"},
		})
		s.template.HasResourceProperties(jsii.String("AWS::ECS::Service"), map[string]any{
			"DesiredCount": 3,
			"NetworkConfiguration": map[string]any{"AwsvpcConfiguration": assertions.Match_ObjectLike(&map[string]any{
				"AssignPublicIp": "DISABLED",
			})},
		})
		s.template.ResourceCountIs(jsii.String("AWS::EC2::NatGateway"), jsii.Number(1))
	})
	for _, td := range s.ofType("AWS::ECS::TaskDefinition") {
		image := flatten(td.Properties["ContainerDefinitions"].([]any)[0].(map[string]any)["Image"])
		if image != "123456789012.dkr.ecr.eu-west-1.{AWS::URLSuffix}/myriarch-gateway:1.2.3" {
			t.Errorf("image %s, want the configured one", image)
		}
		// An ECR image is pulled with the execution role: it may read that repository.
		pulls := false
		for _, st := range s.policies(t)[roleOf(td, "ExecutionRoleArn")] {
			if contains(st.actions, "ecr:BatchGetImage") && reflect.DeepEqual(st.resources, []any{"arn:aws:ecr:eu-west-1:123456789012:repository/myriarch-gateway"}) {
				pulls = true
			}
		}
		if !pulls {
			t.Error("the execution role may not pull the configured ECR image")
		}
	}
	for _, f := range functionSpecs {
		_, r := s.function(t, f.Name)
		e := env(r.Properties)
		if (e[envTokens] == tokenTable) != f.APITokens {
			t.Errorf("%s: %s = %v, want the token table: %v", f.Name, envTokens, e[envTokens], f.APITokens)
		}
		if (e["MYRIARCH_DEFAULT_TIMEZONE"] == "Europe/Berlin") != f.ServerTimezone {
			t.Errorf("%s: default timezone %v, wants it: %v", f.Name, e["MYRIARCH_DEFAULT_TIMEZONE"], f.ServerTimezone)
		}
		if (e["MYRIARCH_RELEASES"] == variant["releases"] && e["MYRIARCH_PLATFORMS"] == variant["platforms"]) != f.Catalog {
			t.Errorf("%s: releases %v platforms %v, catalog: %v", f.Name, e["MYRIARCH_RELEASES"], e["MYRIARCH_PLATFORMS"], f.Catalog)
		}
	}
	if len(s.ofType("AWS::SecretsManager::Secret")) != 0 {
		t.Error("a new token secret although agentTokenSecret is set")
	}
	for hash := range fileAssets(t, s) {
		if strings.HasPrefix(hash, "docker:") {
			t.Errorf("an image asset although gatewayImage is set")
		}
	}
}

func TestGateway_ImageBuiltAtDeployFromTheDockerfile(t *testing.T) {
	s := synthesized(t, nil)
	var dirs []string
	for hash, dir := range fileAssets(t, s) {
		if strings.HasPrefix(hash, "docker:") {
			dirs = append(dirs, dir)
		}
	}
	if len(dirs) != 1 {
		t.Fatalf("%d image assets, want 1", len(dirs))
	}
	// Synthesis staged the build context (no Docker ran: this machine
	// needs none); it holds exactly the allow-listed paths.
	entries, err := os.ReadDir(filepath.Join(s.outdir, dirs[0]))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	want := append([]string(nil), gatewayContext...)
	sort.Strings(want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("image build context holds %v, want %v", got, want)
	}
}

// The same configuration gives the same template byte for byte: no Go map
// order leaks into it, so a deploy without changes changes nothing. (A
// published image: the image asset's hash covers pkg/, which others may be
// editing in this working tree while the test runs.)
func TestSynth_Deterministic(t *testing.T) {
	pinned := map[string]string{"gatewayImage": "public.ecr.aws/myriarch/opamp-gateway:1.0.0"}
	first := synthesized(t, pinned)
	second := synthesize(pinned)
	if second.err != nil {
		t.Fatal(second.err)
	}
	name := stackName(first.config) + ".template.json"
	a, errA := os.ReadFile(filepath.Join(first.outdir, name))
	b, errB := os.ReadFile(filepath.Join(second.outdir, name))
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	if string(a) != string(b) {
		i := 0
		for i < len(a) && i < len(b) && a[i] == b[i] {
			i++
		}
		from := max(0, i-300)
		t.Errorf("two synths of the same configuration differ at byte %d:\n%s\n---\n%s", i, a[from:min(len(a), i+200)], b[from:min(len(b), i+200)])
	}
}

// Without the gateway (LocalStack's free edition has no ECS or load
// balancers) the stack has no network, service or secret, and the rest.
func TestStack_WithoutGateway(t *testing.T) {
	s := synthesized(t, map[string]string{"gateway": "false", "deletionProtection": "false"})
	for _, typ := range []string{"AWS::EC2::VPC", "AWS::ECS::Service", "AWS::ElasticLoadBalancingV2::LoadBalancer", "AWS::SecretsManager::Secret"} {
		if n := len(s.ofType(typ)); n != 0 {
			t.Errorf("%d %s without the gateway", n, typ)
		}
	}
	if len(s.ofType("AWS::Lambda::Function")) != len(functionSpecs) || len(s.ofType("AWS::StepFunctions::StateMachine")) != 1 {
		t.Error("the functions and the state machine are deployed without the gateway too")
	}
	for _, name := range []string{"ApiUrl", "RolloutStateMachineArn", "TablePrefix"} {
		must(t, "output "+name, func() { s.template.HasOutput(jsii.String(name), map[string]any{"Value": assertions.Match_AnyValue()}) })
	}
}
