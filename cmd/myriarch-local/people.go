package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"

	"github.com/myriarch/myriarch/adapters/api"
)

// The people of the local stack besides its three roles: a token table in
// the format of the cloud's (docs/deploy.md, "Operator tokens"), the JSON
// itself in MYRIARCH_TOKENS or a file named by MYRIARCH_TOKENS_FILE, as the
// API function reads it.
const (
	envTokens     = "MYRIARCH_TOKENS"
	envTokensFile = "MYRIARCH_TOKENS_FILE"
)

// loadPeople is the token table the environment names (api.LoadTokens),
// with where it came from for the banner; none without either variable.
func loadPeople(getenv func(string) string) (entries []api.TokenEntry, from string, err error) {
	t, err := api.LoadTokens(getenv)
	if errors.Is(err, api.ErrNoTokens) {
		return nil, "", nil
	}
	from = envTokens
	if getenv(envTokens) == "" {
		from = envTokensFile + " " + getenv(envTokensFile)
	}
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", from, err)
	}
	return t.Entries(), from, nil
}

// peopleLine is the banner's line of the people the environment added.
func peopleLine(entries []api.TokenEntry, from string) string {
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = fmt.Sprintf("%s (%s)", e.DisplayName, e.Role)
	}
	return fmt.Sprintf("  People            %s   (from %s)", strings.Join(names, ", "), from)
}

// addPerson is `myriarch-local token`: it mints a token for a person and
// adds its entry (the hash, never the token) to a token table file, created
// when missing; the token is printed once, on the last line.
func addPerson(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("token", flag.ContinueOnError)
	flags.SetOutput(stderr)
	file := flags.String("file", "", "the token table to add to (make run reads it from "+envTokensFile+")")
	name := flags.String("name", "", "the person's name, as the views and the audit show it")
	role := flags.String("role", "", "viewer, operator or admin")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if *file == "" || strings.TrimSpace(*name) == "" || *role == "" || flags.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: myriarch-local token -file FILE -name NAME -role viewer|operator|admin")
		return 2
	}
	token, err := mintPerson(*file, strings.TrimSpace(*name), api.Role(*role))
	if err != nil {
		fmt.Fprintln(stderr, "myriarch-local token:", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s (%s) added to %s; start make run with %s=%s. The token, shown only now:\n%s\n",
		strings.TrimSpace(*name), *role, *file, envTokensFile, *file, token)
	return 0
}

// mintPerson adds a person with a new token to file and returns the token;
// a bad role, a name already there or an unreadable file changes nothing.
func mintPerson(file, name string, role api.Role) (string, error) {
	if !role.Valid() {
		return "", fmt.Errorf("role %q must be viewer, operator or admin", role)
	}
	var entries []api.TokenEntry
	b, err := os.ReadFile(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return "", err
	default:
		t, err := api.ParseTokens(b) // as the API reads it
		if err != nil {
			return "", fmt.Errorf("%s: %w", file, err)
		}
		entries = t.Entries()
	}
	for _, e := range entries {
		if strings.EqualFold(e.DisplayName, name) {
			return "", fmt.Errorf("%s already has %s (%s): choose another name", file, e.DisplayName, e.Role)
		}
	}
	token, entry, err := api.MintToken(api.Principal{Actor: "user:" + uuid.NewString(), DisplayName: name, Role: role})
	if err != nil {
		return "", err
	}
	out, _ := json.MarshalIndent(append(entries, entry), "", "  ")
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return "", err
	}
	return token, os.WriteFile(file, append(out, '\n'), 0o600)
}
