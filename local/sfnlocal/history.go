package sfnlocal

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
)

// epochSeconds encodes a time as the service does: seconds since the epoch as a JSON
// number with millisecond precision.
type epochSeconds time.Time

func (t epochSeconds) MarshalJSON() ([]byte, error) {
	ms := time.Time(t).UnixMilli()
	return []byte(strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64)), nil
}

// event is one history event. details is the *EventDetails shape named by detailsKey.
type event struct {
	ID         int64
	Prev       int64
	Timestamp  time.Time
	Type       string
	detailsKey string
	details    any
}

func (e *event) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(`{"timestamp":`)
	ts, _ := epochSeconds(e.Timestamp).MarshalJSON()
	buf.Write(ts)
	buf.WriteString(`,"type":`)
	typ, _ := json.Marshal(e.Type)
	buf.Write(typ)
	buf.WriteString(`,"id":` + strconv.FormatInt(e.ID, 10))
	buf.WriteString(`,"previousEventId":` + strconv.FormatInt(e.Prev, 10))
	if e.detailsKey != "" {
		d, err := json.Marshal(e.details)
		if err != nil {
			return nil, err
		}
		buf.WriteString(`,"` + e.detailsKey + `":`)
		buf.Write(d)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// withoutData returns a copy of the event without input and output, for
// GetExecutionHistory with includeExecutionData false.
func (e *event) withoutData() *event {
	c := *e
	switch d := e.details.(type) {
	case executionStartedDetails:
		d.Input = nil
		c.details = d
	case executionSucceededDetails:
		d.Output = nil
		c.details = d
	case stateEnteredDetails:
		d.Input = nil
		c.details = d
	case stateExitedDetails:
		d.Output = nil
		c.details = d
	case taskScheduledDetails:
		d.Parameters = ""
		c.details = d
	case taskOutputDetails:
		d.Output = nil
		c.details = d
	}
	return &c
}

type dataDetails struct {
	Truncated bool `json:"truncated"`
}

var notTruncated = &dataDetails{}

type executionStartedDetails struct {
	Input        *string      `json:"input,omitempty"`
	InputDetails *dataDetails `json:"inputDetails,omitempty"`
	RoleArn      string       `json:"roleArn,omitempty"`
}

type executionSucceededDetails struct {
	Output        *string      `json:"output,omitempty"`
	OutputDetails *dataDetails `json:"outputDetails,omitempty"`
}

// errorDetails is the shape of the ExecutionFailed and ExecutionAborted details.
type errorDetails struct {
	Error *string `json:"error,omitempty"`
	Cause *string `json:"cause,omitempty"`
}

type stateEnteredDetails struct {
	Name         string       `json:"name"`
	Input        *string      `json:"input,omitempty"`
	InputDetails *dataDetails `json:"inputDetails,omitempty"`
}

type stateExitedDetails struct {
	Name          string       `json:"name"`
	Output        *string      `json:"output,omitempty"`
	OutputDetails *dataDetails `json:"outputDetails,omitempty"`
}

type taskScheduledDetails struct {
	ResourceType string `json:"resourceType"`
	Resource     string `json:"resource"`
	Region       string `json:"region"`
	Parameters   string `json:"parameters"`
}

type taskStartedDetails struct {
	ResourceType string `json:"resourceType"`
	Resource     string `json:"resource"`
}

// taskOutputDetails is the shape of TaskSubmitted and TaskSucceeded details.
type taskOutputDetails struct {
	ResourceType  string       `json:"resourceType"`
	Resource      string       `json:"resource"`
	Output        *string      `json:"output,omitempty"`
	OutputDetails *dataDetails `json:"outputDetails,omitempty"`
}

// taskErrorDetails is the shape of TaskFailed and TaskTimedOut details.
type taskErrorDetails struct {
	ResourceType string  `json:"resourceType"`
	Resource     string  `json:"resource"`
	Error        *string `json:"error,omitempty"`
	Cause        *string `json:"cause,omitempty"`
}

func strPtr(s string) *string { return &s }
