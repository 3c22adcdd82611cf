package esm

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/myriarch/myriarch/local/localcloud/cfn"
)

// Mapping is one AWS::Lambda::EventSourceMapping of a DynamoDB stream.
type Mapping struct {
	LogicalID        string
	FunctionARN      string
	StreamARN        string // the template's: the records' eventSourceARN
	BatchSize        int
	BatchingWindow   time.Duration
	StartingPosition string   // LATEST or TRIM_HORIZON
	Filters          []string // FilterCriteria patterns (JSON); a record is delivered when one matches
	Bisect           bool
	MaxRetries       int           // -1: until the records expire
	MaxRecordAge     time.Duration // 0: no limit
	// ReportBatchItemFailures: the function answers which records failed
	// (events.DynamoDBEventResponse), and the batch is retried from the
	// first of them.
	ReportBatchItemFailures bool
	Parallelization         int
	OnFailure               string // the destination's ARN, or empty
	RoleLogicalID           string // the function's execution role
}

// Lambda's defaults for a DynamoDB stream mapping.
const (
	defaultBatchSize = 100
	maxBatchSize     = 10000
)

// MappingsFrom reads every AWS::Lambda::EventSourceMapping of the
// template. A mapping of another event source, or with a setting the local
// cloud does not emulate, is an error; a disabled one is left out.
func MappingsFrom(t *cfn.Template) ([]Mapping, error) {
	var ms []Mapping
	var errs []error
	for _, id := range t.OfType("AWS::Lambda::EventSourceMapping") {
		p := t.Resources[id].Properties
		if enabled, ok := p["Enabled"].(bool); ok && !enabled {
			continue
		}
		m, err := mappingFrom(t, id, p)
		if err != nil {
			errs = append(errs, fmt.Errorf("event source mapping %s: %w", id, err))
			continue
		}
		ms = append(ms, m)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return ms, nil
}

func mappingFrom(t *cfn.Template, id string, p cfn.Props) (Mapping, error) {
	m := Mapping{
		LogicalID:        id,
		StreamARN:        p.Str("EventSourceArn"),
		BatchSize:        int(p.Num("BatchSize", defaultBatchSize)),
		BatchingWindow:   time.Duration(p.Num("MaximumBatchingWindowInSeconds", 0)) * time.Second,
		StartingPosition: p.Str("StartingPosition"),
		Bisect:           p["BisectBatchOnFunctionError"] == true,
		MaxRetries:       int(p.Num("MaximumRetryAttempts", -1)),
		Parallelization:  int(p.Num("ParallelizationFactor", 1)),
	}
	if !strings.Contains(m.StreamARN, ":dynamodb:") || !strings.Contains(m.StreamARN, "/stream/") {
		return Mapping{}, fmt.Errorf("EventSourceArn %q: only DynamoDB streams are emulated", m.StreamARN)
	}
	if age := p.Num("MaximumRecordAgeInSeconds", -1); age > 0 {
		m.MaxRecordAge = time.Duration(age) * time.Second
	}
	if m.StartingPosition != "LATEST" && m.StartingPosition != "TRIM_HORIZON" {
		return Mapping{}, fmt.Errorf("StartingPosition %q: LATEST or TRIM_HORIZON", m.StartingPosition)
	}
	if m.BatchSize < 1 || m.BatchSize > maxBatchSize || m.Parallelization < 1 || m.Parallelization > 10 {
		return Mapping{}, fmt.Errorf("BatchSize %d or ParallelizationFactor %d out of range", m.BatchSize, m.Parallelization)
	}
	if _, ok := p["TumblingWindowInSeconds"]; ok {
		return Mapping{}, errors.New("TumblingWindowInSeconds is not emulated")
	}
	types, _ := p["FunctionResponseTypes"].([]any)
	m.ReportBatchItemFailures = slices.Contains(types, any("ReportBatchItemFailures"))
	if dest, ok := p["DestinationConfig"].(map[string]any); ok {
		onFailure, _ := dest["OnFailure"].(map[string]any)
		m.OnFailure = cfn.Props(onFailure).Str("Destination")
	}
	criteria, _ := p["FilterCriteria"].(map[string]any)
	filters, _ := criteria["Filters"].([]any)
	for _, f := range filters {
		pattern := cfn.Props(f.(map[string]any)).Str("Pattern")
		if _, err := compilePattern(pattern); err != nil {
			return Mapping{}, fmt.Errorf("filter %s: %w", pattern, err)
		}
		m.Filters = append(m.Filters, pattern)
	}
	return m, linkFunction(t, &m, p.Str("FunctionName"))
}

// linkFunction finds the mapping's function, by the name or ARN its
// FunctionName resolved to, and the function's role.
func linkFunction(t *cfn.Template, m *Mapping, name string) error {
	fn, ok := t.LogicalIDOf(name)
	if !ok || t.Resources[fn].Type != "AWS::Lambda::Function" {
		return fmt.Errorf("FunctionName %q is no function of the template", name)
	}
	m.FunctionARN = t.Arn(fn)
	role, ok := t.LogicalIDOf(cfn.Props(t.Resources[fn].Properties).Str("Role"))
	if !ok {
		return fmt.Errorf("function %s: its role is no role of the template", fn)
	}
	m.RoleLogicalID = role
	return nil
}
