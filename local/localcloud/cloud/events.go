package cloud

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
)

// bus is EventBridge's PutEvents for the local cloud: the template's
// event buses accept entries, which are kept (and written to the log
// directory) for the operator and the tests to read. Rules that route
// them onwards (the optional SNS example) are not emulated.
type bus struct {
	mu      sync.Mutex
	buses   map[string]bool // names and ARNs of the template's buses
	entries []Entry
	onEntry func(Entry)
}

// Entry is one event put on a bus.
type Entry struct {
	EventBusName string `json:"eventBusName"`
	Source       string `json:"source"`
	DetailType   string `json:"detailType"`
	Detail       string `json:"detail"`
}

func (b *bus) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-Amz-Target") != "AWSEvents.PutEvents" {
		awsError(w, http.StatusBadRequest, "UnknownOperationException", "the local cloud's EventBridge answers PutEvents only, not "+r.Header.Get("X-Amz-Target"))
		return
	}
	var in struct {
		Entries []struct{ EventBusName, Source, DetailType, Detail string }
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		awsError(w, http.StatusBadRequest, "ValidationException", err.Error())
		return
	}
	if len(in.Entries) == 0 || len(in.Entries) > 10 {
		awsError(w, http.StatusBadRequest, "ValidationException", "1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length less than or equal to 10 and greater than or equal to 1")
		return
	}
	type result struct {
		EventID      string `json:"EventId,omitempty"`
		ErrorCode    string `json:",omitempty"`
		ErrorMessage string `json:",omitempty"`
	}
	var out struct {
		FailedEntryCount int
		Entries          []result
	}
	for _, e := range in.Entries {
		name := e.EventBusName
		if name == "" {
			name = "default"
		}
		if !b.buses[name] {
			out.FailedEntryCount++
			out.Entries = append(out.Entries, result{ErrorCode: "NotAuthorizedForSourceException", ErrorMessage: "no event bus " + name})
			continue
		}
		entry := Entry{EventBusName: name[strings.LastIndex(name, "/")+1:], Source: e.Source, DetailType: e.DetailType, Detail: e.Detail}
		b.mu.Lock()
		b.entries = append(b.entries, entry)
		b.mu.Unlock()
		if b.onEntry != nil {
			b.onEntry(entry)
		}
		var id [16]byte
		_, _ = rand.Read(id[:])
		out.Entries = append(out.Entries, result{EventID: hex.EncodeToString(id[:])})
	}
	writeJSON(w, out)
}

// Entries are the events put so far.
func (b *bus) Entries() []Entry {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Entry(nil), b.entries...)
}
