package esm

import (
	"encoding/json"
	"time"
)

// batch is records of one lane handed to the function together.
type batch struct {
	records []record
	retries int // failed attempts that count toward MaxRetries
	invokes int // attempts so far (the failure's approximateInvokeCount)
}

// result is how an invocation of a batch ended.
type result int

const (
	delivered      result = iota
	functionError         // the function failed (an error, a crash, a timeout)
	partialFailure        // ReportBatchItemFailures named failed records
	invokeFailed          // Lambda did not run it (throttled, service error): not the function's fault
)

// Conditions of the on-failure message, as Lambda names them.
const (
	retriesExhausted = "RetryAttemptsExhausted"
	recordTooOld     = "RecordAgeExceeded"
)

// after decides what follows an attempt: the batches to try next, in
// order, before anything else of the lane, and the batch (if any) that
// goes to the on-failure destination. failedAt is, for a partial failure,
// the index of the first record the function reported.
//
//   - A batch the function failed is split in two with Bisect (a split
//     does not count as a retry), else retried whole.
//   - A partial failure retries from the first failed record: the records
//     before it are done.
//   - Each retry counts; past MaxRetries (unless -1) the batch fails.
//   - An invocation Lambda itself refused is retried as is, uncounted.
func (m Mapping) after(b batch, how result, failedAt int) (next []batch, failed *batch) {
	switch how {
	case delivered:
		return nil, nil
	case invokeFailed:
		return []batch{b}, nil
	case functionError:
		if m.Bisect && len(b.records) > 1 {
			half := len(b.records) / 2
			return []batch{
				{records: b.records[:half], retries: b.retries, invokes: b.invokes},
				{records: b.records[half:], retries: b.retries, invokes: b.invokes},
			}, nil
		}
	case partialFailure:
		b.records = b.records[failedAt:]
	}
	b.retries++
	if m.MaxRetries >= 0 && b.retries > m.MaxRetries {
		return nil, &b
	}
	return []batch{b}, nil
}

// expire splits off the records older than MaxRecordAge at now. Records
// are in stream order, so the expired ones are a prefix.
func (m Mapping) expire(b batch, now time.Time) (keep batch, expired *batch) {
	if m.MaxRecordAge <= 0 {
		return b, nil
	}
	n := 0
	for n < len(b.records) && now.Sub(b.records[n].created) > m.MaxRecordAge {
		n++
	}
	if n == 0 {
		return b, nil
	}
	old := batch{records: b.records[:n], retries: b.retries, invokes: b.invokes}
	b.records = b.records[n:]
	return b, &old
}

// firstFailed reads a ReportBatchItemFailures response: ok with no
// failures (an empty or null list, or no response), the index of the
// earliest failed record, or a complete failure when the response is not
// valid JSON or names a record that is not in the batch, as Lambda treats
// them.
func firstFailed(payload []byte, recs []record) (failedAt int, partial bool, complete bool) {
	if len(payload) == 0 || string(payload) == "null" {
		return 0, false, false
	}
	var resp struct {
		BatchItemFailures []struct {
			ItemIdentifier *string `json:"itemIdentifier"`
		} `json:"batchItemFailures"`
	}
	if json.Unmarshal(payload, &resp) != nil {
		return 0, false, true
	}
	if len(resp.BatchItemFailures) == 0 {
		return 0, false, false
	}
	failedAt = len(recs)
	for _, f := range resp.BatchItemFailures {
		i := indexOfSeq(recs, f.ItemIdentifier)
		if i < 0 {
			return 0, false, true
		}
		failedAt = min(failedAt, i)
	}
	return failedAt, true, false
}

func indexOfSeq(recs []record, seq *string) int {
	if seq == nil || *seq == "" {
		return -1
	}
	for i, r := range recs {
		if r.seq == *seq {
			return i
		}
	}
	return -1
}
