package main

// DynamoDB access, least privilege: each function (and the gateway's task)
// may call exactly the DynamoDB actions that the store methods it runs
// call, table by table, and Query only on the indexes it reads. This file
// is that policy in one place; iam_test.go pins it action by action.
//
// The actions follow from adapters/store's calls (calls.go): getItem → GetItem,
// query → Query (on the table, or on an index), scan → Scan, putItem →
// PutItem, deleteItem → DeleteItem, batchGet → BatchGetItem, batchWrite →
// BatchWriteItem. A transaction (TransactWriteItems) needs the item-level
// action of each of its items on that item's table: Put → PutItem, Update →
// UpdateItem, Delete → DeleteItem, ConditionCheck → ConditionCheckItem.
// The store methods used in common:
//
//   - SavePass (an evaluation pass; also EndRollout, AddTargets and the
//     rollout writes of ParkToken, ClearTaskToken, SetExecution and
//     RecordFailure) is one or more transactions: a Put of each changed
//     target (targets), a Put of the rollout, an Update of its counter per
//     link of a pass of more than 98 targets, a Delete of the fleet's lock
//     item when the rollout ends (rollouts), and a Put of each of its events
//     (events: the outbox).
//   - SetDesiredHash and SetAgentTargetVersions are a strongly consistent
//     BatchGetItem of the agents, then transactions of a conditional Put per
//     changed agent (up to 100 each), and after a lost race a conditional
//     PutItem per agent of that transaction, with a GetItem again after a
//     lost race of its own: PutItem either way; SetPackageOffer,
//     AssignAgent, AckPush, MarkOffline and RecordAgent a GetItem and a
//     conditional PutItem of one agent.
//   - LoadRollout is a GetItem of the rollout and a Query of its targets.
//   - CurrentRevision is a GetItem of the revision pointer (objects);
//     Fleets, Policies, ExecutorObjects and AppliedFleets that GetItem and a
//     Query of the revision's objects.
//   - AppendAudit is a PutItem per entry on the condition that its key is
//     free: the audit log is append-only, and no role may update, delete or
//     batch-write it (iam_test.go checks every role of the stack).
//   - Leases (gateways) is a Scan of the gateway tasks' leases: everyone who
//     judges whether an agent is online (agent.Liveness) reads them, the
//     engine's and the api's passes, the planner, the api's inventory and
//     fleet counts. RenewLease and EndLease, the gateway's, are a
//     conditional PutItem of its own lease.
//
// Stream reads (DescribeStream, GetRecords, GetShardIterator, ListStreams)
// are not here: the event source mappings of the functions fed by a stream
// (agent-event, notify; events.go) grant them on that stream alone.

import (
	"fmt"
	"slices"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"

	"github.com/myriarch/myriarch/adapters/store/tables"
)

// dynamoAction is a DynamoDB IAM action without its "dynamodb:" prefix.
type dynamoAction string

const (
	getItem        dynamoAction = "GetItem"
	batchGetItem   dynamoAction = "BatchGetItem"
	query          dynamoAction = "Query"
	scan           dynamoAction = "Scan"
	putItem        dynamoAction = "PutItem"
	updateItem     dynamoAction = "UpdateItem"
	deleteItem     dynamoAction = "DeleteItem"
	batchWriteItem dynamoAction = "BatchWriteItem"
	// conditionCheckItem: the ConditionCheck item of a transaction
	// (SaveTargets checks the rollout's version without writing it).
	conditionCheckItem dynamoAction = "ConditionCheckItem"
)

// tableAccess is what one principal may do with one table: Actions on the
// table itself (Query among them queries the table's own key), Query on
// each of QueryIndexes, and Scan on each of ScanIndexes.
type tableAccess struct {
	Actions      []dynamoAction
	QueryIndexes []string
	ScanIndexes  []string
}

// on is shorthand for a tableAccess without index queries.
func on(actions ...dynamoAction) tableAccess { return tableAccess{Actions: actions} }

// functionTables is, per function, each table it uses and what it does
// with it. A function without an entry touches no table (authorizer;
// notify, whose stream brings the items).
var functionTables = map[string]map[string]tableAccess{
	// The rollout state machine's tasks: evaluation passes, parking and
	// waking, continue-as-new, recorded failures.
	fnEngine: {
		// AgentsByID (the pass's agents), SetDesiredHash (started targets),
		// SetPackageOffer (the updater executor's Start and Cancel);
		// LinkedUpdaters (byCollector, then BatchGetItem) for collectors
		// that a myriarch-updater serves.
		tables.Agents.Name: {Actions: []dynamoAction{getItem, batchGetItem, putItem},
			QueryIndexes: []string{tables.IndexByCollector}},
		// LoadRollout, the read of ParkToken, ClearTaskToken, SetExecution
		// and RecordFailure; SavePass (put, counter update, lock delete);
		// the claim of version starts (SaveTargets: a ConditionCheck of the
		// rollout's version).
		tables.Rollouts.Name: on(getItem, putItem, updateItem, deleteItem, conditionCheckItem),
		// LoadRollout; SavePass; TargetsOf (a BatchGetItem of the agents'
		// targets): the follow-up of a pass that started version targets.
		tables.Targets.Name:  on(query, putItem, batchGetItem),
		tables.Events.Name:   on(putItem), // SavePass, RecordFailure: the outbox
		tables.Audit.Name:    on(putItem), // AppendAudit: an approval that expired
		tables.Gateways.Name: on(scan),    // Leases: which agents are online
	},
	// The single writer of rollouts: the scheduled run (assignment backstop,
	// then every fleet) and the api's "plan this fleet now".
	fnPlanner: {
		// FleetAgents (Query of byFleet, then BatchGetItem); PendingAssignments
		// (Query of assignment) and AssignAgent (the backstop); AssignPage
		// (the assignment sweep an apply left unfinished: a Scan page, a
		// conditional PutItem per changed agent);
		// SetAgentTargetVersions, SetDesiredHash (bootstrap and catch-up),
		// SetPackageOffer (cancelling a superseded rollout's updater targets).
		tables.Agents.Name: {Actions: []dynamoAction{getItem, batchGetItem, putItem, scan},
			QueryIndexes: []string{tables.IndexByFleet, tables.IndexAssignment}},
		// ActiveRollout (the lock, then LoadRollout), LastTargets (each last
		// target's rollout), the read of ClearTaskToken; CreateRollout (lock
		// and rollout put in one transaction); SavePass through EndRollout
		// and AddTargets (put, counter update, lock delete).
		tables.Rollouts.Name: on(getItem, putItem, updateItem, deleteItem),
		// LoadRollout (Query of the table), LastTargets (Query of
		// byAgentKind); CreateRollout (BatchWriteItem of the new targets,
		// and of their deletion when it lost the lock); SavePass.
		tables.Targets.Name: {Actions: []dynamoAction{query, putItem, batchWriteItem},
			QueryIndexes: []string{tables.IndexByAgentKind}},
		// CurrentRevision, Fleet, Fleets, Policies, ExecutorObjects,
		// AppliedFleets, Selection, CurrentSweep; SaveSelection (put, or
		// delete a cleared one); AdvanceSweep (a conditional PutItem).
		tables.Objects.Name:  on(getItem, query, putItem, deleteItem),
		tables.Events.Name:   on(putItem), // SavePass through EndRollout: the outbox
		tables.Audit.Name:    on(putItem), // AppendAudit: the decisions' entries
		tables.Gateways.Name: on(scan),    // Leases: gone agents get no targets
	},
	// The agents table's stream: assignment, then a pass of every active
	// rollout of the agent's fleets (the planner runs through its Lambda).
	fnAgentEvent: {
		// AssignAgent; the pass: AgentsByID, SetDesiredHash, SetPackageOffer,
		// LinkedUpdaters (byCollector); GetAgent: an updater's collector.
		tables.Agents.Name: {Actions: []dynamoAction{getItem, batchGetItem, putItem},
			QueryIndexes: []string{tables.IndexByCollector}},
		// ActiveRolloutID; the pass: LoadRollout, SavePass; the targeted
		// pass and the claim of version starts: SaveTargets (a
		// ConditionCheck of the rollout's version beside the targets).
		tables.Rollouts.Name: on(getItem, putItem, updateItem, deleteItem, conditionCheckItem),
		// LoadRollout; SavePass, SaveTargets; TargetsOf (a BatchGetItem of
		// the batch's agents' targets).
		tables.Targets.Name:  on(query, putItem, batchGetItem),
		tables.Objects.Name:  on(getItem, query), // AppliedFleets (CurrentRevision, the fleets)
		tables.Events.Name:   on(putItem),        // SavePass: the outbox
		tables.Audit.Name:    on(putItem),        // AppendAudit: an approval that expired
		tables.Gateways.Name: on(scan),           // Leases: the pass's liveness
	},
	// The REST API: reads for the operators, actions (evaluation passes),
	// selections, revisions, the release catalogue. Planning runs in the
	// planner's Lambda (MYRIARCH_PLANNER_FUNCTION), not here.
	fnAPI: {
		// GetAgent, AgentsByID, AgentsPage (Scan), AgentsOfFleet and
		// FleetAgents (byFleet), AgentsByName (byName), AgentsWithAssignmentError
		// (assignment); applying a revision: the assignment sweep's AssignPage
		// (Scan pages, a conditional PutItem per changed agent, AssignAgent
		// after a lost race); AllAgents (Scan) for the plans;
		// actions' passes: SetDesiredHash, SetPackageOffer, LinkedUpdaters
		// (byCollector).
		tables.Agents.Name: {Actions: []dynamoAction{getItem, batchGetItem, scan, putItem},
			QueryIndexes: []string{tables.IndexByFleet, tables.IndexByName, tables.IndexAssignment, tables.IndexByCollector}},
		// GetRollout, LoadRollout, ActiveRollout, LastTargets; RolloutsPage
		// (Query of byFleetKind or byCreated, then BatchGetItem); ClearTaskToken
		// and the actions' SavePass (put, counter update, lock delete); the
		// claim of version starts of an action's pass (SaveTargets).
		tables.Rollouts.Name: {Actions: []dynamoAction{getItem, batchGetItem, putItem, updateItem, deleteItem, conditionCheckItem},
			QueryIndexes: []string{tables.IndexByFleetKind, tables.IndexByCreated}},
		// TargetsPage and LoadRollout (Query of the table), LastTargets
		// (byAgentKind); SavePass.
		tables.Targets.Name: {Actions: []dynamoAction{query, putItem},
			QueryIndexes: []string{tables.IndexByAgentKind}},
		// CurrentRevision, Fleet(s), Policies, ExecutorObjects, Selection,
		// ReleasesOf, GetRelease; SaveSelection, PutRelease, DeleteRelease;
		// PutRevision (configurations and objects by BatchWriteItem, the
		// pointer and its assignment sweep by a transaction of two Puts;
		// CurrentSweep; AdvanceSweep by PutItem; the objects of an older
		// revision deleted by
		// BatchWriteItem).
		tables.Objects.Name: on(getItem, query, putItem, deleteItem, batchWriteItem),
		// EventsPage: one rollout's events (the table), the feed (feed) and a
		// fleet's (feedByFleet); the actions' SavePass: the outbox.
		tables.Events.Name: {Actions: []dynamoAction{query, putItem},
			QueryIndexes: []string{tables.IndexFeed, tables.IndexFeedByFleet}},
		tables.Audit.Name:    on(query, putItem), // AuditOf; AppendAudit
		tables.Gateways.Name: on(scan),           // Leases: online in the inventory, fleet counts, passes, plans
	},
	// The daily release refresh: ReleasesOf (Query), PutRelease.
	fnReleases: {
		tables.Objects.Name: on(query, putItem),
	},
	// The watchdog: Fleets (CurrentRevision, the fleets), then per fleet and
	// kind ActiveRolloutID (the lock) and GetRollout. It writes nothing: a
	// stranded rollout gets a new execution, which writes.
	fnWatchdog: {
		tables.Objects.Name:  on(getItem, query),
		tables.Rollouts.Name: on(getItem),
	},
}

// gatewayTables is what the gateway's task may do: GetAgent, LoadAgent,
// SaveAgent, DisconnectAgent and AckPush (a GetItem and a conditional
// PutItem of one agent; SaveAgent and DisconnectAgent read only after a
// lost race), LaggingAgents (Scan of the sparse index lagging: one request
// per poll while it is empty); ConfigByHash (the
// configuration or its manifest, then a Query of its chunks); RenewLease
// and EndLease (a conditional PutItem of its lease; it never reads leases);
// LoadAgents (a consistent BatchGetItem of the lagging agents whose version
// the index does not tell, every agent on its first connection).
var gatewayTables = map[string]tableAccess{
	tables.Agents.Name:   {Actions: []dynamoAction{getItem, putItem, batchGetItem}, ScanIndexes: []string{tables.IndexLagging}},
	tables.Objects.Name:  on(getItem, query),
	tables.Gateways.Name: on(putItem),
}

// grantTables lets grantee do what want lists: one statement per table
// with its actions on the table, and one with Query on its indexes, in
// name order so that the template does not change from one synth to the
// next. A table or an index that adapters/store/tables does not define stops
// the synthesis.
func grantTables(ts Tables, want map[string]tableAccess, grantee awsiam.IGrantable) {
	for _, name := range sortedKeys(want) {
		a := want[name]
		t, ok := ts[name]
		if !ok {
			panic(fmt.Sprintf("access to table %s, which adapters/store/tables does not define", name))
		}
		if len(a.Actions) > 0 {
			grantee.GrantPrincipal().AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Actions:   dynamoActions(a.Actions),
				Resources: &[]*string{t.TableArn()},
			}))
		}
		grantOnIndexes(t, name, query, a.QueryIndexes, grantee)
		grantOnIndexes(t, name, scan, a.ScanIndexes, grantee)
	}
}

// grantOnIndexes lets grantee call action on the indexes of table t.
func grantOnIndexes(t awsdynamodb.Table, table string, action dynamoAction, indexes []string, grantee awsiam.IGrantable) {
	if len(indexes) == 0 {
		return
	}
	var arns []*string
	for _, ix := range indexes {
		if !hasIndex(table, ix) {
			panic(fmt.Sprintf("%s of index %s of table %s, which adapters/store/tables does not define", action, ix, table))
		}
		arns = append(arns, jsii.String(*t.TableArn()+"/index/"+ix))
	}
	grantee.GrantPrincipal().AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   dynamoActions([]dynamoAction{action}),
		Resources: &arns,
	}))
}

// dynamoActions are the IAM names of actions, sorted.
func dynamoActions(as []dynamoAction) *[]*string {
	names := make([]string, len(as))
	for i, a := range as {
		names[i] = "dynamodb:" + string(a)
	}
	slices.Sort(names)
	return jsii.Strings(names...)
}

func hasIndex(table, index string) bool {
	for _, def := range tables.All() {
		if def.Name == table {
			return slices.ContainsFunc(def.Indexes, func(ix tables.Index) bool { return ix.Name == index })
		}
	}
	return false
}
