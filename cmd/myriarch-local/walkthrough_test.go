package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadmeWalkthrough runs the commands of the README's "Explore it"
// section as printed, against the stack that `make run` starts (this
// command under scripts/with-dynamodb-local.sh, with DATA), so that the
// text cannot drift from what works. Between the canary and the approval it
// stops the stack with SIGTERM, as Ctrl-C or a kill of make would, and
// starts it again on the same data: the rollout must wait for the approval
// as before, and the tokens must still work. Last, the stack is stopped
// again, and nothing it started may outlive it.
func TestReadmeWalkthrough(t *testing.T) {
	if os.Getenv("CI") == "" && os.Getenv("MYRIARCH_UNIT_ONLY") != "" {
		t.Skip("MYRIARCH_UNIT_ONLY: the walk-through runs with make test")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmds := walkthrough(t, filepath.Join(root, "README.md"))
	bin := buildLocal(t)
	data := t.TempDir()
	metrics := freePort(t)
	ctx, cancel := context.WithTimeout(t.Context(), 12*time.Minute)
	defer cancel()

	st := startLocal(t, ctx, root, bin, data, []string{"-api", "127.0.0.1:0", "-gateway", "127.0.0.1:0", "-sfn", "127.0.0.1:0", "-metrics-target", metrics})
	addrs := st.addrs()
	shell := newShell(t, ctx, root, st.export)
	approve := -1
	for i, c := range cmds {
		if strings.Contains(c, "rollouts approve") {
			approve = i
			break
		}
		shell.run(t, c)
	}
	if approve < 0 {
		t.Fatal("the walk-through approves no rollout")
	}
	if !strings.Contains(shell.last, "waiting_approval") {
		t.Fatalf("before the approval the rollout should wait for it; the last command printed:\n%s", shell.last)
	}

	st.stop(t)
	st = startLocal(t, ctx, root, bin, data, append(addrs, "-metrics-target", metrics))
	if st.export != shell.export {
		t.Fatalf("after a restart with DATA the addresses and tokens must stay the same:\n%s\n%s", shell.export, st.export)
	}
	shell.run(t, `go run ./cmd/myrctl watch "$ROLLOUT" --until waiting_approval`)
	for _, c := range cmds[approve:] {
		shell.run(t, c)
	}
	if !strings.Contains(shell.last, "RUNNING") && !strings.Contains(shell.last, "SUCCEEDED") {
		t.Errorf("the executions listing shows no execution:\n%s", shell.last)
	}
	st.stop(t)
}

// walkthrough is the commands of the README's second block under "Explore
// it": the lines that start with "$ ", continuation lines joined.
func walkthrough(t *testing.T, readme string) []string {
	t.Helper()
	b, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "## Explore it")
	if start < 0 {
		t.Fatal(`README has no "## Explore it" section`)
	}
	section := text[start:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	blocks := strings.Split(section, "```sh\n")
	if len(blocks) < 3 {
		t.Fatal("the section should show make run's output, then the commands")
	}
	var cmds []string
	pending := ""
	for _, line := range strings.Split(strings.SplitN(blocks[2], "```", 2)[0], "\n") {
		switch {
		case pending != "":
			pending += "\n" + line
		case strings.HasPrefix(line, "$ "):
			pending = strings.TrimPrefix(line, "$ ")
		default:
			continue
		}
		if strings.HasSuffix(line, "\\") {
			continue
		}
		cmds = append(cmds, pending)
		pending = ""
	}
	if len(cmds) < 10 {
		t.Fatalf("only %d commands found in the walk-through", len(cmds))
	}
	return cmds
}

// local is a running `make run`: the script and the stack under it.
type local struct {
	cmd     *exec.Cmd
	export  string   // the export line it printed
	banner  []string // what it printed until it ran
	done    chan error
	stopped bool
}

func startLocal(t *testing.T, ctx context.Context, root, bin, data string, args []string) *local {
	t.Helper()
	cmd := exec.CommandContext(ctx, filepath.Join(root, "scripts/with-dynamodb-local.sh"), append([]string{bin, "run"}, args...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), envData+"="+data)
	cmd.Stderr = testWriter{t, "stack"}
	// A cancelled test stops the stack as a user would, so that the script
	// still stops DynamoDB Local.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	l := &local{cmd: cmd, done: make(chan error, 1)}
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		line := lines.Text()
		t.Log("stack:", line)
		l.banner = append(l.banner, line)
		if strings.HasPrefix(line, "export ") {
			l.export = line
		}
		if strings.HasPrefix(line, "Running;") {
			break
		}
	}
	if l.export == "" {
		_ = cmd.Process.Kill()
		t.Fatalf("the stack printed no export line before running (%v)", cmd.Wait())
	}
	go func() {
		_, _ = io.Copy(testWriter{t, "stack"}, out)
		l.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if l.stopped {
			return
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-l.done
	})
	return l
}

// addrs are the flags that put a restarted stack on the same addresses.
func (l *local) addrs() []string {
	var api, gw, sfn string
	for _, f := range strings.Fields(strings.TrimPrefix(l.export, "export ")) {
		k, v, _ := strings.Cut(f, "=")
		host := strings.TrimPrefix(strings.TrimPrefix(v, "http://"), "ws://")
		host, _, _ = strings.Cut(host, "/")
		switch k {
		case "MYRIARCH_API":
			api = host
		case "MYRIARCH_GATEWAY":
			gw = host
		case "MYRIARCH_SFN":
			sfn = host
		}
	}
	return []string{"-api", api, "-gateway", gw, "-sfn", sfn}
}

// stop sends SIGTERM to the script, as make passes it on, and checks that
// the stack and DynamoDB Local are gone: nothing answers on the API.
func (l *local) stop(t *testing.T) {
	t.Helper()
	l.stopped = true
	if err := l.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-l.done:
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		if err != nil {
			t.Fatalf("the stack did not stop cleanly on SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		_ = l.cmd.Process.Kill()
		t.Fatal("the stack did not stop within 30s of SIGTERM")
	}
	api := l.addrs()[1]
	if c, err := net.DialTimeout("tcp", api, time.Second); err == nil {
		c.Close()
		t.Fatalf("something still answers on %s after the stop", api)
	}
}

// shell runs the commands in one bash environment, as a reader's terminal:
// variables a command sets are there for the next.
type shell struct {
	ctx    context.Context
	root   string
	env    string // a file with the exported environment after the last command
	export string
	last   string // the output of the last command
}

func newShell(t *testing.T, ctx context.Context, root, export string) *shell {
	env := filepath.Join(t.TempDir(), "env")
	if err := os.WriteFile(env, []byte(export+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return &shell{ctx: ctx, root: root, env: env, export: export}
}

func (s *shell) run(t *testing.T, command string) {
	t.Helper()
	// set -a exports what the command assigns (REV=…), so that export -p
	// carries it to the next command as the reader's terminal would.
	script := fmt.Sprintf("set -euo pipefail\nsource %q\nset -a\n%s\nexport -p > %q\n", s.env, command, s.env)
	ctx, cancel := context.WithTimeout(s.ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = s.root
	out, err := cmd.CombinedOutput()
	t.Logf("$ %s\n%s", command, out)
	if err != nil {
		t.Fatalf("%q failed: %v\n%s", command, err, out)
	}
	s.last = string(out)
}

type testWriter struct {
	t      *testing.T
	prefix string
}

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Logf("%s: %s", w.prefix, strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// freePort is a loopback address free when asked, for a process the test
// starts (which listens on it itself).
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
