package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/myriarch/myriarch/local/localcloud/cloud"
)

// prepareCmd writes the settings of a local cloud (its operators' tokens,
// the loopback ports of the gate servers) and prints the synthesis's
// context flags, one per line, which make them the template's.
func prepareCmd(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("prepare", flag.ContinueOnError)
	dir := fs.String("dir", "build/cloud", "where the settings go")
	if err := fs.Parse(args); err != nil {
		return err
	}
	s, err := cloud.NewSettings()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*dir, 0o700); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(s, "", "  ")
	if err := os.WriteFile(filepath.Join(*dir, "settings.json"), b, 0o600); err != nil {
		return err
	}
	for _, kv := range s.Context() {
		fmt.Fprintln(stdout, "-c")
		fmt.Fprintln(stdout, kv)
	}
	return nil
}
