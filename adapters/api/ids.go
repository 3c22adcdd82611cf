package api

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"

	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/releases"
)

// MaxRolloutIDLength bounds a rollout id. The planners name rollouts like
// r-20260302t100000-9f86d081884c (30 characters) or with 24 hex digits;
// 128 leaves room for other generators and keeps every key that holds a
// rollout id far below DynamoDB's key limits (2,048 bytes for a partition
// key, 1,024 for a sort key).
const MaxRolloutIDLength = 128

// rolloutIDPattern is what the generators use: letters, digits, '.', '_',
// ':' and '-'. It leaves out '#', which the store uses to separate the
// parts of its keys (a lock item is "lock#..."), so no id from the path can
// reach one of them.
var rolloutIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]+$`)

func validRolloutID(id string) bool {
	return len(id) <= MaxRolloutIDLength && rolloutIDPattern.MatchString(id)
}

// maxAuditKeyBytes bounds targetType plus targetId of an audit filter whose
// type has no shape of its own (revisions: a commit). The store keys an
// entry by "<type>#<id>", a partition key of at most 2,048 bytes; half of
// that is more than any commit id.
const maxAuditKeyBytes = 1024

// pathParam is the rule of one path parameter: which values can name an
// object, and the 404 of a value that cannot.
type pathParam struct {
	what     string // for messages: "rollout id"
	valid    func(string) bool
	notFound func(value string) *Problem
	shape    string // for messages: the rule in words
}

// pathParams are the rules of the path parameters that name objects, by
// the parameter's name in the routes. A route's other parameters are the
// handler's to judge (action: 404 action_unknown). The table is checked
// against every route by a test, so that a new {param} cannot go unjudged.
var pathParams = map[string]pathParam{
	"id": {
		what: "rollout id", valid: validRolloutID,
		notFound: func(v string) *Problem {
			return problem(http.StatusNotFound, CodeRolloutNotFound, "rollout "+shorten(v)+" does not exist")
		},
		shape: fmt.Sprintf("a rollout id is 1 to %d letters, digits, '.', '_', ':' or '-'", MaxRolloutIDLength),
	},
	"name": {
		what: "fleet name", valid: fleet.ValidName,
		notFound: func(v string) *Problem { return fleetMissing(shorten(v)) },
		shape: fmt.Sprintf("a fleet name is 1 to %d lowercase letters, digits or '-', starting and ending with a letter or digit",
			fleet.MaxNameLength),
	},
	"distribution": {
		what: "distribution", valid: releases.ValidDistribution,
		notFound: func(v string) *Problem {
			return problem(http.StatusNotFound, CodeReleaseNotFound, "no release of distribution "+shorten(v)+" is known")
		},
		shape: fmt.Sprintf("a distribution is 1 to %d lowercase letters, digits, '.', '_' or '-', starting and ending with a letter or digit",
			releases.MaxDistributionLength),
	},
	"version": {
		what: "version", valid: releases.ValidVersion,
		notFound: func(v string) *Problem {
			return problem(http.StatusNotFound, CodeReleaseNotFound, "no release has the version "+shorten(v))
		},
		shape: fmt.Sprintf("a release version is a semantic version without \"v\" of at most %d characters, e.g. 0.161.0", releases.MaxVersionLength),
	},
}

// MaxAgentRefLength bounds the agent in a path: an instance UID (36
// characters in the gateway's UUID form) or a display name. 128 characters
// are at most 512 bytes of UTF-8, far below DynamoDB's key limits for the
// id and the byName index; an agent whose name is longer is found by its id.
const MaxAgentRefLength = 128

// validAgentRef: 1 to MaxAgentRefLength printable characters (the space
// included, no control characters), as UTF-8. Host names and instance ids
// are printable; anything else names no agent.
func validAgentRef(v string) bool {
	if !utf8.ValidString(v) || utf8.RuneCountInString(v) > MaxAgentRefLength {
		return false
	}
	for _, r := range v {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// routeParams are the rules of path parameters named after the collection
// they follow, which win over pathParams: {id} after /agents is an agent's
// id or display name, not a rollout id.
var routeParams = map[string]pathParam{
	"agents/{id}": {
		what: "agent id or name", valid: validAgentRef,
		notFound: func(v string) *Problem {
			return problem(http.StatusNotFound, CodeAgentNotFound, "no agent has the id or display name "+shorten(v))
		},
		shape: fmt.Sprintf("an agent id or display name is 1 to %d printable characters", MaxAgentRefLength),
	},
}

// ruleOf is the rule of the path parameter key in the route pattern: the
// one of the collection before it (routeParams), else the one of its name.
// Example: /api/v1/agents/{id} → routeParams["agents/{id}"];
// /api/v1/rollouts/{id}/targets → pathParams["id"].
func ruleOf(route, key string) (pathParam, bool) {
	if i := strings.Index(route, "/{"+key+"}"); i >= 0 {
		collection := route[strings.LastIndex(route[:i], "/")+1 : i]
		if rule, ok := routeParams[collection+"/{"+key+"}"]; ok {
			return rule, true
		}
	}
	rule, ok := pathParams[key]
	return rule, ok
}

// checkPath judges the path parameters that name objects before any
// handler reads the store with them. An empty segment (/rollouts//targets)
// is a malformed request: 400. A value that no object can have (too long,
// other characters) names nothing: 404 with the code of an unknown object,
// since that is what it is, and the store never sees it, since DynamoDB
// would refuse it as a key and the refusal would surface as a 500.
func checkPath(r *http.Request) *Problem {
	rc := chi.RouteContext(r.Context())
	if rc == nil {
		return nil
	}
	route := rc.RoutePattern()
	for i, key := range rc.URLParams.Keys {
		rule, ok := ruleOf(route, key)
		if !ok {
			continue
		}
		switch v := rc.URLParams.Values[i]; {
		case v == "":
			return badRequest("the %s in the path is empty", rule.what)
		case !rule.valid(v):
			pr := rule.notFound(v)
			pr.Detail += "; " + rule.shape
			return pr
		}
	}
	return nil
}

// possibleAuditTarget reports whether an object of the type can have the
// id; an audit filter that names no possible object matches nothing, and
// the store is not asked (see maxAuditKeyBytes).
func possibleAuditTarget(typ, id string) bool {
	switch typ {
	case audit.TargetFleet:
		return fleet.ValidName(id)
	case TargetRollout:
		return validRolloutID(id)
	case TargetRelease:
		d, v, ok := strings.Cut(id, "/")
		return ok && releases.ValidDistribution(d) && releases.ValidVersion(v)
	}
	return len(typ)+len(id) <= maxAuditKeyBytes
}

// shorten quotes a value from the path for a message, cut to 64
// characters: a detail need not repeat a 5,000-character id.
func shorten(v string) string { return fmt.Sprintf("%q", clip(v, 64)) }
