package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/core/selection"
)

// Selection reads the UI selection of a fleet (strongly consistent: the
// select and clear operations compare-and-set on its revision); nil when
// there is none.
func (s *Store) Selection(ctx context.Context, fleetName string) (*selection.Selection, error) {
	av, err := s.getItem(ctx, &dynamodb.GetItemInput{TableName: &s.names.Objects, Key: objKey(pkSelection, fleetName), ConsistentRead: aws.Bool(true)})
	if err != nil || av == nil {
		return nil, classify(err, "get the selection of fleet "+fleetName)
	}
	d := newDecoder("selection "+fleetName, av)
	var sel selection.Selection
	rev := d.num(attrRevision)
	d.doc(&sel)
	sel.Fleet, sel.Revision = fleetName, rev
	return &sel, d.err
}

// SaveSelection stores (or, with next nil, deletes) the selection of a fleet
// on the condition that the stored revision is still previousRevision (0:
// none is stored). A new selection carries previousRevision+1. A lost race
// returns ErrConflict: the API's 409 when an operator acted on a stale view.
func (s *Store) SaveSelection(ctx context.Context, fleetName string, next *selection.Selection, previousRevision int64) error {
	key := objKey(pkSelection, fleetName)
	names := map[string]string{"#rev": attrRevision, "#pk": tables.AttrPK}
	values := map[string]types.AttributeValue{":prev": num(previousRevision)}
	if next == nil {
		// Deleting what is not there is no conflict: the outcome is the same.
		err := s.deleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.names.Objects, Key: key,
			ConditionExpression:      aws.String("attribute_not_exists(#pk) OR #rev = :prev"),
			ExpressionAttributeNames: names, ExpressionAttributeValues: values})
		return classify(err, fmt.Sprintf("delete the selection of fleet %s at revision %d", fleetName, previousRevision))
	}
	if next.Revision != previousRevision+1 {
		return fmt.Errorf("save the selection of fleet %s: revision %d does not follow %d", fleetName, next.Revision, previousRevision)
	}
	sel := *next
	sel.Fleet = fleetName
	it, err := newItem().s(tables.AttrPK, pkSelection).s(tables.AttrSK, fleetName).n(attrRevision, sel.Revision).doc(sel)
	if err != nil {
		return fmt.Errorf("selection of fleet %s: %w", fleetName, err)
	}
	cond, names := "#rev = :prev", map[string]string{"#rev": attrRevision}
	if previousRevision == 0 {
		cond, names, values = "attribute_not_exists(#pk)", map[string]string{"#pk": tables.AttrPK}, nil
	}
	err = s.putItem(ctx, &dynamodb.PutItemInput{TableName: &s.names.Objects, Item: it,
		ConditionExpression: &cond, ExpressionAttributeNames: names, ExpressionAttributeValues: values})
	return classify(err, fmt.Sprintf("save the selection of fleet %s at revision %d", fleetName, sel.Revision))
}
