package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/page"
)

func auditTarget(targetType, targetID string) string { return targetType + "#" + targetID }

// auditID is a time-ordered id: the entry's time to the nanosecond, then 8
// random bytes so that entries of one instant stay distinct.
// Example: 20260302T100000.000000000Z-9f86d081884c7d65.
func auditID(e audit.Entry) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return e.At.UTC().Format("20060102T150405.000000000Z") + "-" + hex.EncodeToString(b[:]), nil
}

// AppendAudit stores audit entries, assigning the ids of those without one.
// The log is append-only: each entry is a PutItem on the condition that no
// entry has its key, so that nothing overwrites an entry, not even a caller
// that repeats an id (the deployment lets writers PutItem on this table and
// nothing else; BatchWriteItem takes no condition). An entry whose id is
// taken is an error wrapping rollout.ErrConflict, and the stored entry stays
// as it was.
func (s *Store) AppendAudit(ctx context.Context, es []audit.Entry) error {
	ids := make([]string, len(es))
	items := make([]item, len(es))
	for i, e := range es {
		if e.ID == "" {
			id, err := auditID(e)
			if err != nil {
				return fmt.Errorf("audit entry id: %w", err)
			}
			e.ID = id
		}
		e.At = e.At.UTC()
		it, err := newItem().s(tables.AttrAuditTarget, auditTarget(e.TargetType, e.TargetID)).s(tables.AttrAuditID, e.ID).doc(e)
		if err != nil {
			return fmt.Errorf("audit entry %s: %w", e.ID, err)
		}
		ids[i], items[i] = e.ID, it
	}
	return forEach(ctx, len(items), workers, func(ctx context.Context, i int) error {
		err := s.putItem(ctx, &dynamodb.PutItemInput{TableName: &s.names.Audit, Item: items[i],
			ConditionExpression:      aws.String("attribute_not_exists(#t)"),
			ExpressionAttributeNames: map[string]string{"#t": tables.AttrAuditTarget}})
		return classify(err, "append audit entry "+ids[i])
	})
}

// AuditOf is one page of the audit entries of one object, newest first.
func (s *Store) AuditOf(ctx context.Context, targetType, targetID, token string, limit int) (page.Page[audit.Entry], error) {
	start, err := decodeToken(token)
	if err != nil {
		return page.Page[audit.Entry]{}, err
	}
	target := auditTarget(targetType, targetID)
	out, err := s.query(ctx, &dynamodb.QueryInput{
		TableName: &s.names.Audit, ScanIndexForward: aws.Bool(false), Limit: pageLimit(limit), ExclusiveStartKey: start,
		KeyConditionExpression:    aws.String("#t = :t"),
		ExpressionAttributeNames:  map[string]string{"#t": tables.AttrAuditTarget},
		ExpressionAttributeValues: map[string]types.AttributeValue{":t": str(target)},
	})
	if err != nil {
		return page.Page[audit.Entry]{}, classify(err, "query the audit of "+target)
	}
	p := page.Page[audit.Entry]{Next: encodeToken(out.LastEvaluatedKey)}
	for _, av := range out.Items {
		d := newDecoder("audit entry "+target+" "+keyOf(av, tables.AttrAuditID), av)
		var e audit.Entry
		e.ID = d.str(tables.AttrAuditID)
		id := e.ID
		d.doc(&e)
		if d.err != nil {
			return page.Page[audit.Entry]{}, d.err
		}
		e.ID = id
		p.Items = append(p.Items, e)
	}
	return p, nil
}
