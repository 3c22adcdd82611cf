// Package tables is the single description of Myriarch's DynamoDB tables:
// names, key attributes, secondary indexes and streams, as plain data. The
// store creates its tables from it for DynamoDB Local and the tests, and the
// CDK app (infra/) builds the deployed tables from the same values, so the
// two cannot drift. It imports nothing from the AWS SDK on purpose.
//
// Every table is on-demand (pay per request) and keyed by strings; the
// access patterns that use each key and index are in
// adapters/store/ACCESS_PATTERNS.md.
package tables

// AttrType is a DynamoDB scalar type of a key attribute.
type AttrType string

const (
	String AttrType = "S"
	Number AttrType = "N"
)

// Key is one key attribute of a table or an index.
type Key struct {
	Name string
	Type AttrType
}

// Projection of a secondary index.
type Projection string

const (
	ProjectAll      Projection = "ALL"
	ProjectKeysOnly Projection = "KEYS_ONLY"
	ProjectInclude  Projection = "INCLUDE" // keys and NonKeyAttributes
)

// StreamView is what a table's stream records carry; "" is no stream.
type StreamView string

const (
	NewAndOldImages StreamView = "NEW_AND_OLD_IMAGES"
	NewImage        StreamView = "NEW_IMAGE"
)

// Index is a global secondary index.
type Index struct {
	Name             string
	PartitionKey     Key
	SortKey          *Key // nil: none
	Projection       Projection
	NonKeyAttributes []string // for ProjectInclude
}

// Table is one table without its deployment prefix.
type Table struct {
	Name         string // base name; the deployed name is prefix + Name
	PartitionKey Key
	SortKey      *Key // nil: none
	Indexes      []Index
	Stream       StreamView
	// TTL names the number attribute (epoch seconds) after which DynamoDB
	// deletes an item; "" is none.
	TTL string
}

// Attribute names of keys and index keys. Other attributes are the store's
// business (adapters/store/item.go).
const (
	AttrID             = "id"               // agents, rollouts: agent id, rollout id or lock key
	AttrFleet          = "fleet"            // agents: fleet name (absent while unassigned); events: the rollout's fleet
	AttrLag            = "lag"              // agents: shard 0-7 of the agent id while its pushed state lags the desired one, else absent
	AttrName           = "name"             // agents: display name (host.name, else service.instance.id, else the id)
	AttrAssignState    = "assignState"      // agents: pending#<shard 0-7> while the fleet must be (re)assigned, "error" with an assignment error, else absent
	AttrFleetKind      = "fleetKind"        // rollouts: <fleet>#<kind> (absent on lock items)
	AttrCreatedAt      = "createdAt"        // rollouts: creation time, sortable text
	AttrListed         = "listed"           // rollouts: the constant "rollout" (absent on lock items); events: "event"
	AttrKind           = "kind"             // rollouts: kind, projected into byCreated for filters
	AttrRolloutID      = "rolloutId"        // targets, events: partition key
	AttrWaveAgent      = "waveAgent"        // targets: <wave, 5 digits>#<agentId>
	AttrAgentKind      = "agentKind"        // targets: <agentId>#<kind>
	AttrRolloutCreated = "rolloutCreatedAt" // targets: the rollout's createdAt
	AttrPK             = "pk"               // objects: kind of object (and revision)
	AttrSK             = "sk"               // objects: name within it
	AttrAuditTarget    = "target"           // audit: <targetType>#<targetId>
	AttrAuditID        = "id"               // audit: time-ordered entry id
	AttrSeq            = "seq"              // events: <rollout version, 10 digits>#<index, 3 digits>
	AttrFeed           = "feed"             // events: <time, sortable>#<rolloutId>#<seq>
	AttrExpiresAt      = "expiresAt"        // events, gateways: epoch seconds, the table's TTL
	AttrTask           = "task"             // gateways: the gateway task's id
	AttrCollector      = "linkedCollector"  // agents: of a myriarch-updater, the id of the collector it serves, else absent
	IndexByFleet       = "byFleet"
	IndexLagging       = "laggingDesired" // "lagging" while it projected whole items: a projection cannot change in place
	IndexByName        = "byName"
	IndexAssignment    = "assignment"
	IndexByFleetKind   = "byFleetKind"
	IndexByCreated     = "byCreated"
	IndexByAgentKind   = "byAgentKind"
	IndexFeed          = "feed"
	IndexFeedByFleet   = "feedByFleet"
	IndexByCollector   = "byCollector"
	tableAgents        = "agents"
	tableRollouts      = "rollouts"
	tableTargets       = "targets"
	tableObjects       = "objects"
	tableAudit         = "audit"
	tableEvents        = "events"
	tableGateways      = "gateways"
)

func str(name string) Key { return Key{Name: name, Type: String} }

func sk(name string) *Key { k := str(name); return &k }

// Agents: one item per agent as the gateway reports it. Streams carry every
// change to the agent-event Lambda, which evaluates that agent's targets:
// the new image only, since every write stamps what it changed (wr, and the
// fleet it left, store/written.go).
//
// byFleet projects keys only: the index is then written when an agent is
// created, deleted or moves to another fleet, not on every heartbeat; the
// planner reads the agents of a fleet by id. lagging is sparse (agents
// with a push to send) and projects what a push needs and nothing else:
// the desired state, which a lagging item copies into attributes of its
// own (LagNonKeyAttributes), and the counters that tell the gateway whether
// it may take that state over its own last write. The gateway scans it
// every second and, in a wave, each lagging agent about three times; whole
// items were three quarters of the bytes. Its key is a shard of the agent
// id so that a large rollout does not write one hot partition.
//
// byName finds an agent by the name people know it by (keys only: names
// change rarely, so the index is seldom written). assignment is sparse: it
// holds the agents whose fleet must still be (re)computed (new, or their
// attributes changed; sharded like lagging) and those with an assignment
// error, so that the periodic backstop and the error listings read a few
// items instead of scanning every agent.
//
// byCollector is sparse: the myriarch-updaters, by the collector each
// serves. Keys only: the link is written when an updater first reports,
// and readers take the updater's reports from the table itself, consistent.
var Agents = Table{
	Name: tableAgents, PartitionKey: str(AttrID), Stream: NewImage,
	Indexes: []Index{
		{Name: IndexByFleet, PartitionKey: str(AttrFleet), SortKey: sk(AttrID), Projection: ProjectKeysOnly},
		{Name: IndexLagging, PartitionKey: str(AttrLag), SortKey: sk(AttrID), Projection: ProjectInclude,
			NonKeyAttributes: LagNonKeyAttributes},
		{Name: IndexByName, PartitionKey: str(AttrName), SortKey: sk(AttrID), Projection: ProjectKeysOnly},
		{Name: IndexAssignment, PartitionKey: str(AttrAssignState), SortKey: sk(AttrID), Projection: ProjectAll},
		{Name: IndexByCollector, PartitionKey: str(AttrCollector), SortKey: sk(AttrID), Projection: ProjectKeysOnly},
	},
}

// LagShards is the number of partition key values of the lagging index.
const LagShards = 8

// Attributes of an agent item that the lagging index projects besides its
// keys (store/lagging.go): the schema version and write counter, the
// counter of the last write of anything but the desired state, and the
// desired state copied while the agent lags.
const (
	AttrFactsV       = "fv" // agents: v of the last write that changed anything but the desired state
	AttrLagHash      = "lh" // agents, while lagging: the desired hash (B, 32 bytes, when it is hex sha256; else S)
	AttrLagOffer     = "lo" // agents, while lagging: the package offer
	AttrLagTargetVer = "lt" // agents, while lagging: the target version
)

// LagNonKeyAttributes are the attributes the lagging index projects.
var LagNonKeyAttributes = []string{"sv", "v", AttrFactsV, AttrLagHash, AttrLagOffer, AttrLagTargetVer}

// Rollouts: rollout items and, keyed lock#<fleet>#<kind>, the lock items
// that make one rollout per fleet and kind the active one. Both indexes
// list rollouts newest first and project only what never changes after
// creation, so that the write of every evaluation pass does not write them
// too; a listing reads the page's rollouts by id.
var Rollouts = Table{
	Name: tableRollouts, PartitionKey: str(AttrID),
	Indexes: []Index{
		{Name: IndexByFleetKind, PartitionKey: str(AttrFleetKind), SortKey: sk(AttrCreatedAt), Projection: ProjectKeysOnly},
		{Name: IndexByCreated, PartitionKey: str(AttrListed), SortKey: sk(AttrCreatedAt), Projection: ProjectInclude,
			NonKeyAttributes: []string{AttrFleet, AttrKind}},
	},
}

// Targets: the targets of a rollout, in wave order within the rollout.
var Targets = Table{
	Name: tableTargets, PartitionKey: str(AttrRolloutID), SortKey: sk(AttrWaveAgent),
	Indexes: []Index{
		{Name: IndexByAgentKind, PartitionKey: str(AttrAgentKind), SortKey: sk(AttrRolloutCreated), Projection: ProjectAll},
	},
}

// Objects: the applied revision (fleets, policies, rendered configurations,
// the current-revision pointer) and the UI selections.
var Objects = Table{Name: tableObjects, PartitionKey: str(AttrPK), SortKey: sk(AttrSK)}

// Audit: the audit log, per target, newest last in key order.
var Audit = Table{Name: tableAudit, PartitionKey: str(AttrAuditTarget), SortKey: sk(AttrAuditID)}

// Events: the outbox of rollout notifications (core/notify), one item per
// event, written in the transaction of the rollout change that caused it
// and never changed afterwards. Its stream (new images) delivers them: to
// the EventBridge bus in the cloud, to a webhook locally. Items expire
// after 14 days (TTL on expiresAt), so the table stays small. The table's
// key lists the events of one rollout in the order of its versions; feed
// (the constant "event" under listed) lists every event by time and
// feedByFleet those of one fleet. Both project everything: the feed serves
// whole events, and an event is written once.
var Events = Table{
	Name: tableEvents, PartitionKey: str(AttrRolloutID), SortKey: sk(AttrSeq), Stream: NewImage, TTL: AttrExpiresAt,
	Indexes: []Index{
		{Name: IndexFeed, PartitionKey: str(AttrListed), SortKey: sk(AttrFeed), Projection: ProjectAll},
		{Name: IndexFeedByFleet, PartitionKey: str(AttrFleet), SortKey: sk(AttrFeed), Projection: ProjectAll},
	},
}

// Gateways: one lease item per running gateway task, renewed every third
// of the liveness timeout and read whole by everyone who judges whether an
// agent is online (an agent counts as connected while the lease of the task
// holding it is alive). A task that ends writes its lease ended; items
// expire eight days after their lease (TTL on expiresAt, longer than the
// agent retention), so the table holds about one item per task started in
// that time.
var Gateways = Table{Name: tableGateways, PartitionKey: str(AttrTask), TTL: AttrExpiresAt}

// All lists every table.
func All() []Table { return []Table{Agents, Rollouts, Targets, Objects, Audit, Events, Gateways} }

// Names are the deployed names of the tables.
type Names struct {
	Agents, Rollouts, Targets, Objects, Audit, Events, Gateways string
}

// WithPrefix names every table prefix + base name, e.g. "myriarch-agents"
// for prefix "myriarch-".
func WithPrefix(prefix string) Names {
	return Names{
		Agents: prefix + tableAgents, Rollouts: prefix + tableRollouts, Targets: prefix + tableTargets,
		Objects: prefix + tableObjects, Audit: prefix + tableAudit, Events: prefix + tableEvents,
		Gateways: prefix + tableGateways,
	}
}
