package memstore

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/myriarch/myriarch/adapters/enginetask"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/assignment"
	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/executor"
	"github.com/myriarch/myriarch/core/executorobject"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/notify/notifytest"
	"github.com/myriarch/myriarch/core/page"
	"github.com/myriarch/myriarch/core/planner"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/releases"
	"github.com/myriarch/myriarch/core/revision"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selection"
)

// Store is the in-memory store. Its methods are safe for concurrent use;
// the exported fields are the stored items, for tests to arrange and
// inspect while they hold Lock.
type Store struct {
	mu             sync.Mutex
	Revision       *revision.Pointer // nil before the first apply
	FleetsByName   map[string]fleet.Fleet
	PoliciesByName map[string]policy.Policy
	Executors      map[string]executorobject.Object
	Selections     map[string]selection.Selection
	Agents         map[string]agent.Agent
	Creds          map[string]Credential // by agent id: the agents holding a credential of their own
	Pushes         map[string]Push       // by agent id: what the gateway delivered
	GatewayLeases  map[string]Lease      // by gateway task
	// Sweep is the assignment sweep PutRevision records, at the revision
	// pointer's counter.
	Sweep    assignment.Sweep
	Rollouts map[string]rollout.Rollout
	Targets  map[string][]rollout.Target // by rollout id
	Audit    []audit.Entry               // in the order appended
	Releases map[string]releases.Release // by Release.Key()
	// ReleaseConflicts makes the next release writes lose a race.
	ReleaseConflicts int

	auditSeq int
	versions map[string]int64 // by agent id: the item's counter
	events   notifytest.Feed
	fail     map[string]error
}

var (
	_ enginetask.Store  = (*Store)(nil)
	_ enginetask.Tokens = (*Store)(nil)
	_ planner.Store     = (*Store)(nil)
	_ executor.Offers   = (*Store)(nil)
)

// New returns an empty store.
func New() *Store {
	return &Store{FleetsByName: map[string]fleet.Fleet{}, PoliciesByName: map[string]policy.Policy{},
		Selections: map[string]selection.Selection{}, Agents: map[string]agent.Agent{},
		Creds: map[string]Credential{}, Pushes: map[string]Push{}, GatewayLeases: map[string]Lease{}, versions: map[string]int64{},
		Releases: map[string]releases.Release{},
		Rollouts: map[string]rollout.Rollout{}, Targets: map[string][]rollout.Target{}, fail: map[string]error{}}
}

// Lock holds the store for a test that touches the exported fields.
func (m *Store) Lock() { m.mu.Lock() }

// Unlock releases Lock.
func (m *Store) Unlock() { m.mu.Unlock() }

// Fail makes every later call of the named method (GetRollout, SaveEvaluation,
// AgentsPage, …: see failing's callers) return err; nil heals it.
func (m *Store) Fail(method string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err == nil {
		delete(m.fail, method)
		return
	}
	m.fail[method] = err
}

func (m *Store) failing(method string) error { return m.fail[method] }

// keyError is DynamoDB's refusal of a key value: an empty string, or one
// over 1,024 bytes (a sort key's limit; a partition key may have 2,048, but
// the store puts ids and names in both). Callers must never pass such a
// value on; this store refuses it as DynamoDB does, so that a test sees the
// failure that would follow.
func keyError(v string) error {
	if v == "" || len(v) > 1024 {
		return fmt.Errorf("ValidationException: a key value of %d bytes", len(v))
	}
	return nil
}

// pageOf pages a list by offset, as the store pages by key: the token is
// the opaque offset of the next item.
func pageOf[T any](all []T, token string, limit int) (page.Page[T], error) {
	if limit <= 0 || limit > 1000 {
		limit = 100 // store.DefaultPageSize
	}
	from := 0
	if token != "" {
		b, err := base64.RawURLEncoding.DecodeString(token)
		n, err2 := strconv.Atoi(string(b))
		if err != nil || err2 != nil || n < 0 {
			return page.Page[T]{}, fmt.Errorf("%w: %q", page.ErrBadToken, token)
		}
		from = n
	}
	p := page.Page[T]{Items: []T{}}
	for i := from; i < len(all) && i < from+limit; i++ {
		p.Items = append(p.Items, all[i])
	}
	if from+limit < len(all) {
		p.Next = base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(from + limit)))
	}
	return p, nil
}

// clone is a deep copy through JSON, as the store keeps items as JSON: a
// caller's later change to what it wrote or read never reaches the store.
func clone[T any](v T) T {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var c T
	if err := json.Unmarshal(b, &c); err != nil {
		panic(err)
	}
	return c
}
