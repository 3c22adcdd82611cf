package main

import "github.com/spf13/cobra"

// addAPICommands adds the commands that talk to the API.
func addAPICommands(root *cobra.Command, g *globals) {}
