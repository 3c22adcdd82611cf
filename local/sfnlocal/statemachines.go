package sfnlocal

import (
	"sort"
	"time"

	"github.com/myriarch/myriarch/local/sfnlocal/asl"
)

// stateMachine is a created state machine. It lives as long as the Server: sfnlocal
// implements neither UpdateStateMachine nor DeleteStateMachine (nothing of ours calls
// them; the local stack creates the machine once per run).
type stateMachine struct {
	arn        string
	name       string
	definition string
	parsed     *asl.Definition
	roleArn    string
	created    time.Time
	logging    *loggingConfiguration
	tracing    *tracingConfiguration
}

type loggingConfiguration struct {
	Level                *string `json:"level,omitempty"`
	IncludeExecutionData *bool   `json:"includeExecutionData,omitempty"`
	Destinations         []any   `json:"destinations,omitempty"`
}

type tracingConfiguration struct {
	Enabled *bool `json:"enabled,omitempty"`
}

func defaultLogging() *loggingConfiguration {
	level, include := "OFF", false
	return &loggingConfiguration{Level: &level, IncludeExecutionData: &include}
}

func defaultTracing() *tracingConfiguration {
	enabled := false
	return &tracingConfiguration{Enabled: &enabled}
}

type createStateMachineInput struct {
	Name                 *string               `json:"name"`
	Definition           *string               `json:"definition"`
	RoleArn              *string               `json:"roleArn"`
	Type                 string                `json:"type"`
	LoggingConfiguration *loggingConfiguration `json:"loggingConfiguration"`
	TracingConfiguration *tracingConfiguration `json:"tracingConfiguration"`
	Tags                 []any                 `json:"tags"`
	Publish              bool                  `json:"publish"`
	VersionDescription   *string               `json:"versionDescription"`
	EncryptionConfig     map[string]any        `json:"encryptionConfiguration"`
}

type createStateMachineOutput struct {
	StateMachineArn string       `json:"stateMachineArn"`
	CreationDate    epochSeconds `json:"creationDate"`
}

func parseDefinition(def string) (*asl.Definition, *APIError) {
	d, err := asl.Parse(def)
	if err != nil {
		return nil, &APIError{Type: errInvalidDefinition, Message: err.Error()}
	}
	return d, nil
}

func checkRole(role string) *APIError {
	_, err := checkARNPrefix(role)
	return err
}

func checkARNPrefix(arn string) (string, *APIError) {
	if len(arn) < 4 || arn[:4] != "arn:" {
		return "", apiErr(errInvalidArn, "Invalid Arn: 'Invalid ARN prefix: %s'", arn)
	}
	return arn, nil
}

func unsupportedVersioning(publish bool, description *string) *APIError {
	if publish {
		return apiErr(errValidation, "sfnlocal does not support state machine versions (publish)")
	}
	if description != nil {
		return apiErr(errValidation, "Version description can only be set when publish is true")
	}
	return nil
}

func (s *Server) createStateMachine(in *createStateMachineInput) (any, error) {
	switch {
	case in.Name == nil:
		return nil, notNull("name")
	case in.Definition == nil:
		return nil, notNull("definition")
	case in.RoleArn == nil:
		return nil, notNull("roleArn")
	}
	if !validName(*in.Name) {
		return nil, apiErr(errInvalidName, "Invalid Name: '%s'", *in.Name)
	}
	if err := checkRole(*in.RoleArn); err != nil {
		return nil, err
	}
	switch in.Type {
	case "", "STANDARD":
	case "EXPRESS":
		return nil, apiErr(errStateMachineTypeNotSupported, "sfnlocal runs only STANDARD state machines")
	default:
		return nil, apiErr(errValidation, "1 validation error detected: Value '%s' at 'type' failed to satisfy constraint: Member must satisfy enum value set: [STANDARD, EXPRESS]", in.Type)
	}
	if err := unsupportedVersioning(in.Publish, in.VersionDescription); err != nil {
		return nil, err
	}
	if in.EncryptionConfig != nil {
		return nil, apiErr(errValidation, "sfnlocal does not support encryptionConfiguration")
	}
	parsed, apiErr := parseDefinition(*in.Definition)
	if apiErr != nil {
		return nil, apiErr
	}
	logging, tracing := in.LoggingConfiguration, in.TracingConfiguration
	if logging == nil {
		logging = defaultLogging()
	}
	if tracing == nil {
		tracing = defaultTracing()
	}
	arn := s.stateMachineARN(*in.Name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if sm, ok := s.machines[arn]; ok {
		// Idempotent on name, definition, type, logging and tracing, as the service is.
		if sm.definition == *in.Definition && sameJSON(sm.logging, logging) && sameJSON(sm.tracing, tracing) {
			return createStateMachineOutput{StateMachineArn: arn, CreationDate: epochSeconds(sm.created)}, nil
		}
		return nil, stateMachineAlreadyExists(arn)
	}
	sm := &stateMachine{
		arn: arn, name: *in.Name, definition: *in.Definition, parsed: parsed, roleArn: *in.RoleArn,
		created: s.clock.Now(), logging: logging, tracing: tracing,
	}
	s.machines[arn] = sm
	return createStateMachineOutput{StateMachineArn: arn, CreationDate: epochSeconds(sm.created)}, nil
}

func stateMachineAlreadyExists(arn string) *APIError {
	return apiErr(errStateMachineAlreadyExists, "State Machine Already Exists: '%s'", arn)
}

// lookupMachine finds a state machine by ARN (s.mu held).
func (s *Server) lookupMachine(arn string) (*stateMachine, *APIError) {
	if _, err := checkARN(arn, "stateMachine"); err != nil {
		return nil, err
	}
	sm, ok := s.machines[arn]
	if !ok {
		return nil, apiErr(errStateMachineDoesNotExist, "State Machine Does Not Exist: '%s'", arn)
	}
	return sm, nil
}

type listInput struct {
	MaxResults int32   `json:"maxResults"`
	NextToken  *string `json:"nextToken"`
}

type stateMachineListItem struct {
	StateMachineArn string       `json:"stateMachineArn"`
	Name            string       `json:"name"`
	Type            string       `json:"type"`
	CreationDate    epochSeconds `json:"creationDate"`
}

type listStateMachinesOutput struct {
	StateMachines []stateMachineListItem `json:"stateMachines"`
	NextToken     string                 `json:"nextToken,omitempty"`
}

func (s *Server) listStateMachines(in *listInput) (any, error) {
	s.mu.Lock()
	items := make([]stateMachineListItem, 0, len(s.machines))
	for _, sm := range s.machines {
		items = append(items, stateMachineListItem{StateMachineArn: sm.arn, Name: sm.name, Type: "STANDARD", CreationDate: epochSeconds(sm.created)})
	}
	s.mu.Unlock()
	sort.Slice(items, func(i, j int) bool { return items[i].Name < items[j].Name })
	page, next, err := paginate(items, in.MaxResults, in.NextToken, 1024, "ListStateMachines")
	if err != nil {
		return nil, err
	}
	return listStateMachinesOutput{StateMachines: page, NextToken: next}, nil
}
