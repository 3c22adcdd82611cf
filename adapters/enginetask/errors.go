package enginetask

import (
	"errors"
	"fmt"

	"github.com/myriarch/myriarch/core/rollout"
)

// RetryableError is a transient failure (a lost race, throttling, a network
// error): the state machine's Retry matches its type name "RetryableError".
type RetryableError struct{ Err error }

func (e *RetryableError) Error() string { return "retryable: " + e.Err.Error() }
func (e *RetryableError) Unwrap() error { return e.Err }

// TerminalError cannot succeed on retry (the rollout does not exist, its
// item does not decode): the state machine's Catch records it on the rollout.
type TerminalError struct{ Err error }

func (e *TerminalError) Error() string { return "terminal: " + e.Err.Error() }
func (e *TerminalError) Unwrap() error { return e.Err }

// ErrRolloutNotFound is wrapped by a store when a rollout does not exist.
var ErrRolloutNotFound = rollout.ErrNotFound

// classify turns a store or executor error into the named type that the
// state machine's Retry and Catch match.
func classify(op string, err error) error {
	if err == nil {
		return nil
	}
	err = fmt.Errorf("%s: %w", op, err)
	var te *TerminalError
	if errors.As(err, &te) {
		return err
	}
	if errors.Is(err, ErrRolloutNotFound) {
		return &TerminalError{Err: err}
	}
	if errors.Is(err, rollout.ErrConflict) {
		return &RetryableError{Err: err}
	}
	return &RetryableError{Err: err}
}
