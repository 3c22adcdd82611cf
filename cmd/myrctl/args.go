package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// argHints say what to give for a positional argument, by its name in a
// command's usage line.
var argHints = map[string]string{
	"ID":           "a rollout id (myrctl rollouts list shows them)",
	"ROLLOUT":      "a rollout id (myrctl rollouts list shows them)",
	"ID|NAME":      "an agent's instance UID or display name (myrctl agents list shows them)",
	"NAME":         "a fleet's name (myrctl fleets list shows them)",
	"DISTRIBUTION": "a distribution such as otelcol-contrib (myrctl releases summary shows them)",
	"VERSION":      "a version such as 0.162.0",
	"DIR":          "a revision directory",
}

// refuseEmptyArgs makes every command of the tree refuse an empty (or
// blank) positional argument before it runs, as a usage error that names
// the argument: `myrctl watch ""` would otherwise ask for
// /api/v1/rollouts/, a path that is no rollout, and the API's 404 would
// point at the wrong cause.
func refuseEmptyArgs(cmd *cobra.Command) {
	if names := positionalNames(cmd.Use); cmd.Args != nil && len(names) > 0 {
		check := cmd.Args
		cmd.Args = func(c *cobra.Command, args []string) error {
			if err := check(c, args); err != nil {
				return err
			}
			return emptyArg(c, names, args)
		}
	}
	for _, sub := range cmd.Commands() {
		refuseEmptyArgs(sub)
	}
}

// emptyArg names the first empty or blank argument:
// `watch: ROLLOUT is empty: give a rollout id (myrctl rollouts list shows them)`.
func emptyArg(cmd *cobra.Command, names, args []string) error {
	for i, a := range args {
		if strings.TrimSpace(a) != "" {
			continue
		}
		name := "argument " + fmt.Sprint(i+1)
		if i < len(names) {
			name = names[i]
			if len(names) > 1 {
				name += fmt.Sprintf(" (argument %d)", i+1)
			}
		}
		what := "is empty"
		if a != "" {
			what = "is blank"
		}
		path := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
		msg := fmt.Sprintf("%s: %s %s", path, name, what)
		if i < len(names) && argHints[names[i]] != "" {
			msg += ": give " + argHints[names[i]]
		}
		return fmt.Errorf("%s", msg)
	}
	return nil
}

// positionalNames are the argument names of a usage line: the words after
// the command's name up to the first flag or optional part
// ("approve ID --wave NAME|N" has ID).
func positionalNames(use string) []string {
	words := strings.Fields(use)
	var out []string
	for _, w := range words[min(1, len(words)):] {
		if strings.HasPrefix(w, "-") || strings.HasPrefix(w, "[") {
			break
		}
		out = append(out, w)
	}
	return out
}
