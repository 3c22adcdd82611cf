package main

import (
	"fmt"
	"io"

	"github.com/myriarch/myriarch/local/stack"
)

// shutdown stops what the command started, the last started first: the
// simulated fleet, then the stack (its gateway, its API, its functions),
// then the gate servers; DynamoDB Local, started around the command by
// scripts/with-dynamodb-local.sh, stops after it. Stopped by a Ctrl-C or
// SIGTERM, it prints a line for each part as that part has stopped, in the
// banner's columns; a run that ends otherwise (the demo done, a start that
// failed) stops quietly.
type shutdown struct {
	steps []func(say reporter)
}

// reporter says that a part has stopped, and with what error; detail, if
// given, follows "stopped".
type reporter func(part string, err error, detail ...string)

// quietly is the reporter of a stop nobody is told about.
func quietly(string, error, ...string) {}

// partFleet is the simulated fleet's name in the banner and the stop lines.
const partFleet = "Simulated fleet"

// stackPart reports a part of the stack, saying what the functions are.
func stackPart(say reporter) func(part string, err error) {
	return func(part string, err error) {
		if part == stack.PartFunctions {
			say(part, err, "with the Lambdas, the schedules and the stream delivery")
			return
		}
		say(part, err)
	}
}

func (sd *shutdown) add(step func(say reporter)) { sd.steps = append(sd.steps, step) }

func (sd *shutdown) run(w io.Writer, loud bool) {
	say := func(part string, err error, detail ...string) {
		if loud {
			fmt.Fprintln(w, stoppedLine(part, err, detail...))
		}
	}
	for i := len(sd.steps) - 1; i >= 0; i-- {
		sd.steps[i](say)
	}
	sd.steps = nil
}

// stoppedLine is "  Prometheus        stopped", with the error when the
// part did not stop cleanly.
func stoppedLine(part string, err error, detail ...string) string {
	what := "stopped"
	if len(detail) > 0 && detail[0] != "" {
		what += " (" + detail[0] + ")"
	}
	if err != nil {
		what += ": " + err.Error()
	}
	return fmt.Sprintf("  %-18s%s", part, what)
}
