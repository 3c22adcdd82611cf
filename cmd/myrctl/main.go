// Command myrctl operates Myriarch: validates and applies GitOps revisions,
// lists and steers rollouts, chooses fleet versions, lists the agents, and
// watches a rollout live. Every command takes --output json for scripts.
//
// Exit statuses: 0 success; 1 the operation failed (the API refused, the
// API could not be reached, the revision is invalid, or the watched
// rollout ended other than completed); 2 a usage error (unknown command or
// flag, wrong arguments, a directory that cannot be read); 3 the install
// plan is not ready yet; 130 watch was interrupted (Ctrl-C).
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

// exitError carries the exit status of a command that already said why.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// Exit statuses beyond 0, 1 and 2.
const exitInterrupted = 130 // 128 + SIGINT, as shells report it

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runContext(ctx, newGlobals(os.Stdout, os.Stderr), os.Args[1:])
	stop()
	os.Exit(code)
}

// run executes myrctl with args and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	return runContext(context.Background(), newGlobals(stdout, stderr), args)
}

// runContext executes myrctl with the globals' streams and clocks.
func runContext(ctx context.Context, g *globals, args []string) int {
	// Nothing myrctl writes carries the bearer token: not the help, not an
	// error, not an answer of the API that echoes it.
	g.stdout = redactor{w: g.stdout, secret: g.bearer}
	g.stderr = redactor{w: g.stderr, secret: g.bearer}
	root := newRoot(g)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	var ee exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	}
	fmt.Fprintln(g.stderr, "myrctl:", err)
	return 2
}

// globals are the flags every command shares, the streams, and what tests
// replace: the local clock and the wait between two refreshes of watch.
type globals struct {
	api    string
	token  string
	output string
	stdout io.Writer
	stderr io.Writer

	now      func() time.Time
	sleep    func(ctx context.Context, d time.Duration) error
	terminal bool // stdout is a terminal: watch redraws in place
}

func newGlobals(stdout, stderr io.Writer) *globals {
	return &globals{stdout: stdout, stderr: stderr, now: time.Now, sleep: sleep, terminal: isTerminal(stdout)}
}

func newRoot(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:           "myrctl",
		Short:         "Operate Myriarch rollouts of OpenTelemetry Collector fleets",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(g.stdout)
	root.SetErr(g.stderr)
	// The defaults are read when a command runs, not shown in the help: the
	// help must not print the token of the environment.
	root.PersistentFlags().StringVar(&g.api, "api", "", "base URL of the Myriarch API, with or without /api/v1 (env MYRIARCH_API; default "+defaultAPI+")")
	root.PersistentFlags().StringVar(&g.token, "token", "", "bearer token (env MYRIARCH_TOKEN); never printed")
	root.PersistentFlags().StringVarP(&g.output, "output", "o", "text", "output format: text or json")
	root.AddCommand(validateCmd(g))
	addAPICommands(root, g)
	refuseEmptyArgs(root)
	return root
}

// defaultAPI is the API of the local stack (make run).
const defaultAPI = "http://127.0.0.1:8080"

// apiURL is the API's base URL: --api, else MYRIARCH_API, else the local
// stack's.
func (g *globals) apiURL() string {
	if g.api != "" {
		return g.api
	}
	return envOr("MYRIARCH_API", defaultAPI)
}

// bearer is the token: --token, else MYRIARCH_TOKEN.
func (g *globals) bearer() string {
	if g.token != "" {
		return g.token
	}
	return os.Getenv("MYRIARCH_TOKEN")
}

// otherOperatorToken reports whether the environment holds the local
// stack's operator token (make run's export line sets
// MYRIARCH_OPERATOR_TOKEN) and myrctl runs with another one: the approval
// hints then show how to approve with it.
func (g *globals) otherOperatorToken() bool {
	op := os.Getenv("MYRIARCH_OPERATOR_TOKEN")
	return op != "" && op != g.bearer()
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// redactor writes what w would, with the secret (if any) replaced by
// <token>.
type redactor struct {
	w      io.Writer
	secret func() string
}

func (r redactor) Write(p []byte) (int, error) {
	s := r.secret()
	if s == "" || !bytes.Contains(p, []byte(s)) {
		return r.w.Write(p)
	}
	if _, err := r.w.Write(bytes.ReplaceAll(p, []byte(s), []byte("<token>"))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
