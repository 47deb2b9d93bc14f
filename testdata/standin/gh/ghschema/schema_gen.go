//go:build ignore

// schema_gen writes schema.graphql and LICENSE.md — GitHub's published
// GraphQL schema as the npm package @octokit/graphql-schema holds it, at the
// version npm/package-lock.json pins: `npm ci` in a temporary folder, then
// the two files copied as they are. Run by `go generate
// ./testdata/standin/gh/ghschema`; TestVendoredSchema runs it into a
// temporary folder and compares.
//
//	go run schema_gen.go [-out DIR]
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

func main() {
	out := flag.String("out", ".", "write the files into `DIR`")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "schema_gen:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	tmp, err := os.MkdirTemp("", "saga-ghschema-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, f := range []string{"package.json", "package-lock.json"} {
		data, err := os.ReadFile(filepath.Join("npm", f))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(tmp, f), data, 0o644); err != nil {
			return err
		}
	}
	cmd := exec.Command("npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = tmp
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm ci: %v\n%s", err, b)
	}
	pkg := filepath.Join(tmp, "node_modules", "@octokit", "graphql-schema")
	for _, f := range []string{"schema.graphql", "LICENSE.md"} {
		data, err := os.ReadFile(filepath.Join(pkg, f))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, f), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
