//go:build ignore

// vendor_gen writes assets/vendor/ — the graph layout library the
// dashboard embeds — from the npm registry, as assets/npm's lock file pins
// it: `npm ci` in a temporary folder, then the bundle copied without its
// source-map comment (the page asks nothing but the dashboard, not even a
// map) and the licences of what it bundles. Run by `go generate
// ./dashboard`; TestVendoredAssets runs it into a temporary folder and
// compares.
//
//	go run vendor_gen.go [-out DIR]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	out := flag.String("out", filepath.Join("assets", "vendor"), "write the files into `DIR`")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "vendor_gen:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	tmp, err := os.MkdirTemp("", "saga-dashboard-vendor-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, f := range []string{"package.json", "package-lock.json"} {
		data, err := os.ReadFile(filepath.Join("assets", "npm", f))
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
	mods := filepath.Join(tmp, "node_modules", "@dagrejs")
	bundle, err := os.ReadFile(filepath.Join(mods, "dagre", "dist", "dagre.min.js"))
	if err != nil {
		return err
	}
	var kept []string
	for _, line := range strings.Split(string(bundle), "\n") {
		if !strings.HasPrefix(line, "//# sourceMappingURL=") {
			kept = append(kept, line)
		}
	}
	bundle = []byte(strings.Join(kept, "\n"))
	var lic bytes.Buffer
	lic.WriteString("dagre.min.js is @dagrejs/dagre's browser bundle, which includes @dagrejs/graphlib.\n" +
		"Vendored by dashboard/vendor_gen.go from the versions dashboard/assets/npm/package-lock.json pins.\n")
	for _, pkg := range []string{"dagre", "graphlib"} {
		data, err := os.ReadFile(filepath.Join(mods, pkg, "LICENSE"))
		if err != nil {
			return err
		}
		fmt.Fprintf(&lic, "\n--- @dagrejs/%s ---\n\n%s", pkg, data)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "dagre.min.js"), bundle, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "LICENSE.dagre.txt"), lic.Bytes(), 0o644)
}
