//go:build ignore

// vendor_gen writes assets/vendor/ — the libraries the dashboard embeds:
// the graph's layout (dagre) and the live page's update in place
// (morphdom) — from the npm registry, as assets/npm's lock file pins
// them: `npm ci` in a temporary folder, then each bundle copied without its
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
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	mods := filepath.Join(tmp, "node_modules")
	for _, v := range []struct {
		bundle, from, name, about string
		licences                  []string // the packages whose licences it carries
	}{
		{"dagre.min.js", "@dagrejs/dagre/dist/dagre.min.js", "dagre",
			"dagre.min.js is @dagrejs/dagre's browser bundle, which includes @dagrejs/graphlib.", []string{"@dagrejs/dagre", "@dagrejs/graphlib"}},
		{"morphdom.min.js", "morphdom/dist/morphdom-umd.min.js", "morphdom",
			"morphdom.min.js is morphdom's browser bundle.", []string{"morphdom"}},
	} {
		bundle, err := os.ReadFile(filepath.Join(mods, filepath.FromSlash(v.from)))
		if err != nil {
			return err
		}
		var kept []string
		for _, line := range strings.Split(string(bundle), "\n") {
			if !strings.HasPrefix(line, "//# sourceMappingURL=") {
				kept = append(kept, line)
			}
		}
		var lic bytes.Buffer
		lic.WriteString(v.about + "\nVendored by dashboard/vendor_gen.go from the versions dashboard/assets/npm/package-lock.json pins.\n")
		for _, pkg := range v.licences {
			data, err := os.ReadFile(filepath.Join(mods, filepath.FromSlash(pkg), "LICENSE"))
			if err != nil {
				return err
			}
			fmt.Fprintf(&lic, "\n--- %s ---\n\n%s", pkg, data)
		}
		if err := os.WriteFile(filepath.Join(out, v.bundle), []byte(strings.Join(kept, "\n")), 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, "LICENSE."+v.name+".txt"), lic.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}
