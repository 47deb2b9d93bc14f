// Command dist builds saga-lsp's release into a folder (`make dist`,
// docs/releasing.md): for each of the six targets an archive (tar.gz; zip
// for Windows) holding the binary, stamped with the version, its man page,
// its shell completions, the README and the LICENSE, and every file the
// README links to, and they link to in turn (docs/, the editors' READMEs),
// so that no link in an archive is broken; a per-platform VS
// Code extension carrying the same binary when -vsix is given; and
// checksums.txt over all of them (sha256sum's format). Archives are
// reproducible: sorted entries, one modification time (the commit's),
// no owner.
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"
)

// A target is a GOOS/GOARCH pair and the name VS Code gives the platform.
type target struct{ goos, goarch, vsce string }

// targets are the six a release builds for.
func targets() []target {
	return []target{
		{"linux", "amd64", "linux-x64"}, {"linux", "arm64", "linux-arm64"},
		{"darwin", "amd64", "darwin-x64"}, {"darwin", "arm64", "darwin-arm64"},
		{"windows", "amd64", "win32-x64"}, {"windows", "arm64", "win32-arm64"},
	}
}

func main() {
	out := flag.String("out", "dist", "the folder to write (emptied first)")
	version := flag.String("version", "", "the version to stamp (default: git describe)")
	only := flag.String("targets", "", "comma-separated GOOS/GOARCH to build (default: all six)")
	vsix := flag.Bool("vsix", false, "also package the VS Code extension per platform (needs npm)")
	flag.Parse()
	if err := run(*out, *version, *only, *vsix); err != nil {
		slog.Error("dist", "err", err)
		os.Exit(1)
	}
}

func run(out, version, only string, vsix bool) error {
	if version == "" {
		v, err := git("describe", "--tags", "--always", "--dirty")
		if err != nil {
			return fmt.Errorf("the version: %w (pass -version)", err)
		}
		version = v
	}
	stamp := time.Unix(0, 0).UTC()
	if s, err := git("log", "-1", "--format=%ct"); err == nil {
		var secs int64
		fmt.Sscan(s, &secs)
		stamp = time.Unix(secs, 0).UTC()
	}
	chosen := targets()
	if only != "" {
		chosen = nil
		for _, t := range targets() {
			if slices.Contains(strings.Split(only, ","), t.goos+"/"+t.goarch) {
				chosen = append(chosen, t)
			}
		}
		if len(chosen) == 0 {
			return fmt.Errorf("-targets %q names none of the six (linux, darwin, windows × amd64, arm64)", only)
		}
	}
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	work := filepath.Join(out, ".work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(work)

	// The man page and completions come from a binary that runs here.
	host, _, err := build(work, target{goos: runtime.GOOS, goarch: runtime.GOARCH}, version, "host")
	if err != nil {
		return err
	}
	extras := map[string][]byte{}
	for name, args := range map[string][]string{
		"man/saga-lsp.1":            {"man"},
		"completions/saga-lsp.bash": {"completion", "bash"},
		"completions/_saga-lsp":     {"completion", "zsh"},
		"completions/saga-lsp.fish": {"completion", "fish"},
	} {
		data, err := exec.Command(host, args...).Output()
		if err != nil {
			return fmt.Errorf("saga-lsp %s: %w", strings.Join(args, " "), err)
		}
		extras[name] = data
	}
	docs, err := linkedDocs("README.md", "LICENSE")
	if err != nil {
		return err
	}
	maps.Copy(extras, docs)

	var made []string
	for _, t := range chosen {
		bin, hookBin, err := build(work, t, version, t.goos+"-"+t.goarch)
		if err != nil {
			return err
		}
		files := map[string][]byte{}
		for _, b := range []string{bin, hookBin} {
			if files[filepath.Base(b)], err = os.ReadFile(b); err != nil {
				return err
			}
		}
		for k, v := range extras {
			files[k] = v
		}
		base := fmt.Sprintf("saga-lsp_%s_%s_%s", strings.TrimPrefix(version, "v"), t.goos, t.goarch)
		name := base + ".tar.gz"
		var data []byte
		if t.goos == "windows" {
			name = base + ".zip"
			data, err = zipArchive(base, files, stamp)
		} else {
			data, err = tarArchive(base, files, stamp)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(out, name), data, 0o644); err != nil {
			return err
		}
		made = append(made, name)
		if vsix {
			name := fmt.Sprintf("saga-lsp-%s-%s.vsix", t.vsce, strings.TrimPrefix(version, "v"))
			abs, _ := filepath.Abs(filepath.Join(out, name))
			absBin, _ := filepath.Abs(bin)
			args := []string{t.vsce, absBin, abs}
			// The Marketplace takes major.minor.patch only: other versions
			// (a commit past a tag) keep package.json's.
			if v := strings.TrimPrefix(version, "v"); regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`).MatchString(v) {
				args = append(args, v)
			}
			cmd := exec.Command("editors/vscode/scripts/package-target.sh", args...)
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("package %s: %w", name, err)
			}
			made = append(made, name)
		}
	}
	slices.Sort(made)
	var sums strings.Builder
	for _, name := range made {
		data, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(sum[:]), name)
	}
	if err := os.WriteFile(filepath.Join(out, "checksums.txt"), []byte(sums.String()), 0o644); err != nil {
		return err
	}
	fmt.Printf("%s: %d files and checksums.txt for saga-lsp %s\n", out, len(made), version)
	return nil
}

// mdLink is a Markdown link's target: ](target) or ](target#fragment).
var mdLink = regexp.MustCompile(`\]\(([^)#\s]*)(?:#[^)\s]*)?\)`)

// linkedDocs reads the files roots and every file their Markdown links
// to, and those link to in turn, by their paths from the repository's
// root: what an archive carries so that none of its links is broken. A
// link to a web address or within the page is left; one to a file that
// does not exist, or outside the repository, is an error.
func linkedDocs(roots ...string) (map[string][]byte, error) {
	files := map[string][]byte{}
	todo := slices.Clone(roots)
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		if _, ok := files[name]; ok {
			continue
		}
		data, err := os.ReadFile(filepath.FromSlash(name))
		if err != nil {
			return nil, fmt.Errorf("%w (run dist from the repository's root)", err)
		}
		files[name] = data
		if !strings.HasSuffix(name, ".md") {
			continue
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if target == "" || strings.Contains(target, ":") {
				continue // within the page, or a web address
			}
			linked := path.Join(path.Dir(name), target)
			if linked == ".." || strings.HasPrefix(linked, "../") || path.IsAbs(target) {
				return nil, fmt.Errorf("%s links to %s, outside the repository", name, target)
			}
			if fi, err := os.Stat(filepath.FromSlash(linked)); err != nil || !fi.Mode().IsRegular() {
				return nil, fmt.Errorf("%s links to %s, which is no file of the repository", name, target)
			}
			todo = append(todo, linked)
		}
	}
	return files, nil
}

func git(args ...string) (string, error) {
	out, err := exec.Command("git", args...).Output()
	return strings.TrimSpace(string(out)), err
}

// build cross-compiles saga-lsp and saga-lsp-hook (docs/hooks.md#the-hook-program)
// for t into work/dir, with the same flags: the worker runs the hook
// program only when its build record matches saga-lsp's.
func build(work string, t target, version, dir string) (bin, hookBin string, err error) {
	exe := ""
	if t.goos == "windows" {
		exe = ".exe"
	}
	bin, hookBin = filepath.Join(work, dir, "saga-lsp"+exe), filepath.Join(work, dir, "saga-lsp-hook"+exe)
	for out, pkg := range map[string]string{bin: "./cmd/saga-lsp", hookBin: "./cmd/saga-lsp-hook"} {
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X github.com/saga-ai/saga-lsp/cli.Version="+version, "-o", out, pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.goos, "GOARCH="+t.goarch)
		if msg, err := cmd.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("go build %s for %s/%s: %w\n%s", pkg, t.goos, t.goarch, err, msg)
		}
	}
	return bin, hookBin, nil
}

// sortedNames are the archive's entries in a fixed order.
func sortedNames(files map[string][]byte) []string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func mode(name string) int64 {
	if strings.HasPrefix(name, "saga-lsp") && !strings.Contains(name, "/") {
		return 0o755
	}
	return 0o644
}

func tarArchive(base string, files map[string][]byte, stamp time.Time) ([]byte, error) {
	var buf bytes.Buffer
	// Go's default level: BestCompression took 2.8 times as long (6.0 s an
	// archive on a loaded machine, ten archives a TestDist) for 0.15% less.
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, n := range sortedNames(files) {
		h := &tar.Header{Name: base + "/" + n, Mode: mode(n), Size: int64(len(files[n])), ModTime: stamp, Format: tar.FormatPAX, Uname: "", Gname: ""}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(files[n]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func zipArchive(base string, files map[string][]byte, stamp time.Time) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range sortedNames(files) {
		h := &zip.FileHeader{Name: base + "/" + n, Method: zip.Deflate, Modified: stamp}
		h.SetMode(os.FileMode(mode(n)))
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(files[n]); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
