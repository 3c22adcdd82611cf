package waves

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"slices"
)

// digest is sha256(rolloutID || agentID) as four big-endian words: comparing
// the words in order compares the digest bytewise.
type digest [4]uint64

// sortKey is what the sort moves: the first word of the digest and the
// candidate. 16 bytes instead of 40 make the sort of 100,000 agents about
// twice as fast; the rare tie on the first word falls back to the full digest.
type sortKey struct {
	head  uint64
	index int32
}

// hashOrder returns the indices of the candidates ascending by
// sha256(rolloutID || agentID): the byte concatenation of the two strings, no
// separator. Each digest is computed once into one reused buffer. A repeated
// agent ID has the same digest, so its copies end up adjacent; only the first
// in candidate order is kept, because a rollout has one target per agent.
func hashOrder(rolloutID string, candidates []Candidate) []int32 {
	return orderOf(rolloutID, len(candidates), func(i int) string { return candidates[i].AgentID })
}

// HashOrder is the same order for plain agent IDs: the indices of agentIDs
// ascending by sha256(rolloutID || agentID), a repeated ID only once. The
// topology of a rollout orders the targets of a pass with it, so that its
// batches are as stable as the waves.
func HashOrder(rolloutID string, agentIDs []string) []int32 {
	return orderOf(rolloutID, len(agentIDs), func(i int) string { return agentIDs[i] })
}

func orderOf(rolloutID string, n int, agentID func(i int) string) []int32 {
	digests := make([]digest, n)
	keys := make([]sortKey, n)
	buf := make([]byte, 0, len(rolloutID)+64)
	for i := range n {
		buf = append(append(buf[:0], rolloutID...), agentID(i)...)
		sum := sha256.Sum256(buf)
		for w := range digests[i] {
			digests[i][w] = binary.BigEndian.Uint64(sum[8*w:])
		}
		keys[i] = sortKey{head: digests[i][0], index: int32(i)}
	}
	slices.SortFunc(keys, func(a, b sortKey) int {
		if c := cmp.Compare(a.head, b.head); c != 0 {
			return c
		}
		if c := compareDigests(digests[a.index], digests[b.index]); c != 0 {
			return c
		}
		return cmp.Compare(a.index, b.index) // the first of repeated IDs wins
	})

	order := make([]int32, 0, len(keys))
	for i, k := range keys {
		if i > 0 && digests[k.index] == digests[keys[i-1].index] {
			continue
		}
		order = append(order, k.index)
	}
	return order
}

func compareDigests(a, b digest) int {
	for w := range a {
		if c := cmp.Compare(a[w], b[w]); c != 0 {
			return c
		}
	}
	return 0
}
