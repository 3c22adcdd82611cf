package api

import (
	"net/http"

	"github.com/myriarch/myriarch/adapters/api/schema"
	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/page"
)

// auditView is named by the tests.
type auditView = schema.AuditEntry

func newAuditView(e audit.Entry, names Directory) schema.AuditEntry {
	return schema.AuditEntry{ID: e.ID, At: e.At.UTC(), Actor: e.Actor, ActorDisplayName: names.DisplayName(e.Actor), Action: e.Action,
		TargetType: e.TargetType, TargetID: e.TargetID, Result: e.Result, Details: e.Details}
}

func (s *server) listAudit(_ http.ResponseWriter, r *http.Request, _ Principal) (int, any, error) {
	q, p := newQuery(r, "targetType", "targetId", "limit", "pageToken")
	if p != nil {
		return 0, nil, p
	}
	typ, id := q.get("targetType"), q.get("targetId")
	if typ == "" || id == "" {
		return 0, nil, badRequest("targetType and targetId are required, e.g. ?targetType=fleet&targetId=edge")
	}
	limit, token, p := q.page()
	if p != nil {
		return 0, nil, p
	}
	out := page.Page[schema.AuditEntry]{Items: []schema.AuditEntry{}}
	if !possibleAuditTarget(typ, id) {
		return http.StatusOK, out, nil
	}
	pg, err := s.Store.AuditOf(r.Context(), typ, id, token, limit)
	if err != nil {
		return 0, nil, pageError(err)
	}
	out.Next = pg.Next
	for _, e := range pg.Items {
		out.Items = append(out.Items, newAuditView(e, s.Names))
	}
	return http.StatusOK, out, nil
}
