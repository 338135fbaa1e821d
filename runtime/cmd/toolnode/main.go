// Command toolnode runs MCP tool bundles behind one MCP endpoint.
package main

import (
	"os"

	"github.com/toolnode/toolnode/runtime/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
