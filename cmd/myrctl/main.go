// Command myrctl operates Myriarch: validates and applies GitOps revisions,
// lists and steers rollouts, chooses fleet versions, and watches a rollout
// live. Every command takes --output json for scripts.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// exitError carries the exit status of a command that already said why.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes myrctl with args and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	var ee exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	}
	fmt.Fprintln(stderr, "myrctl:", err)
	return 2
}

// globals are the flags every command shares.
type globals struct {
	api    string
	token  string
	output string
	stdout io.Writer
	stderr io.Writer
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	g := &globals{stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Use:           "myrctl",
		Short:         "Operate Myriarch rollouts of OpenTelemetry Collector fleets",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.PersistentFlags().StringVar(&g.api, "api", envOr("MYRIARCH_API", "http://127.0.0.1:8080"), "base URL of the Myriarch API (env MYRIARCH_API)")
	root.PersistentFlags().StringVar(&g.token, "token", os.Getenv("MYRIARCH_TOKEN"), "bearer token (env MYRIARCH_TOKEN)")
	root.PersistentFlags().StringVarP(&g.output, "output", "o", "text", "output format: text or json")
	root.AddCommand(validateCmd(g))
	addAPICommands(root, g)
	return root
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
