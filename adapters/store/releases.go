package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/core/releases"
)

// The release catalogue lives in the objects table, one partition per
// distribution (release#<distribution>) and one item per version (the sort
// key). A distribution holds a few hundred releases at most, so a listing
// reads the whole partition in one or two pages and orders it by semantic
// version in memory: the sort key's text order is not the version order
// (0.99.0 sorts after 0.161.0), and no index could hold semver precedence.

// releasePK is the partition of a distribution's releases.
func releasePK(distribution string) string { return "release#" + distribution }

// ReleasesOf lists the stored releases of a distribution, newest first
// (strongly consistent). A name no distribution can have lists nothing,
// without a request.
func (s *Store) ReleasesOf(ctx context.Context, distribution string) ([]releases.Release, error) {
	if !releases.ValidDistribution(distribution) {
		return nil, nil
	}
	items, err := s.queryAll(ctx, releasePK(distribution))
	if err != nil {
		return nil, err
	}
	out := make([]releases.Release, 0, len(items))
	for _, av := range items {
		r, err := decodeRelease(distribution, av)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	releases.SortNewestFirst(out)
	return out, nil
}

// GetRelease reads one stored release (strongly consistent: a put or a
// delete decides on it); nil when it is not stored.
func (s *Store) GetRelease(ctx context.Context, distribution, version string) (*releases.Release, error) {
	if !releases.ValidDistribution(distribution) || !releases.ValidVersion(version) {
		return nil, nil
	}
	av, err := s.getItem(ctx, &dynamodb.GetItemInput{TableName: &s.names.Objects, Key: objKey(releasePK(distribution), version), ConsistentRead: aws.Bool(true)})
	if err != nil || av == nil {
		return nil, classify(err, "get release "+distribution+"/"+version)
	}
	r, err := decodeRelease(distribution, av)
	return &r, err
}

func decodeRelease(distribution string, av map[string]types.AttributeValue) (releases.Release, error) {
	version := keyOf(av, tables.AttrSK)
	d := newDecoder("release "+distribution+"/"+version, av)
	var r releases.Release
	rev := d.num(attrV)
	d.doc(&r)
	if d.err == nil && (r.Distribution != distribution || r.Version != version) {
		d.fail("the document names release %s", r.Key())
	}
	r.Revision = rev
	return r, d.err
}

// PutRelease stores a release (admin or published) on the condition that
// the stored revision is still previousRevision (0: not stored); it is
// stored with previousRevision+1. A lost race returns ErrConflict: the
// caller reads again and decides again, so that the refresh never
// overwrites an administrator's entry written meanwhile.
func (s *Store) PutRelease(ctx context.Context, r releases.Release, previousRevision int64) error {
	if err := releases.Check(r); err != nil {
		return fmt.Errorf("put release: %w", err)
	}
	r.Revision = previousRevision + 1
	it, err := newItem().s(tables.AttrPK, releasePK(r.Distribution)).s(tables.AttrSK, r.Version).n(attrV, r.Revision).doc(r)
	if err != nil {
		return fmt.Errorf("release %s: %w", r.Key(), err)
	}
	cond, names, values := versionCondition(tables.AttrPK, previousRevision)
	err = s.putItem(ctx, &dynamodb.PutItemInput{TableName: &s.names.Objects, Item: it,
		ConditionExpression: &cond, ExpressionAttributeNames: names, ExpressionAttributeValues: values})
	return classify(err, fmt.Sprintf("put release %s at revision %d", r.Key(), r.Revision))
}

// DeleteRelease deletes a stored release on the condition that its
// revision is still previousRevision. A release deleted or changed since
// is ErrConflict: the caller reads again (and finds nothing to delete, or
// something new to decide on).
func (s *Store) DeleteRelease(ctx context.Context, distribution, version string, previousRevision int64) error {
	if previousRevision == 0 {
		return fmt.Errorf("delete release %s/%s: a stored release has a revision", distribution, version)
	}
	cond, names, values := versionCondition(tables.AttrPK, previousRevision)
	err := s.deleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.names.Objects, Key: objKey(releasePK(distribution), version),
		ConditionExpression: &cond, ExpressionAttributeNames: names, ExpressionAttributeValues: values})
	return classify(err, fmt.Sprintf("delete release %s/%s at revision %d", distribution, version, previousRevision))
}
