package buildcache

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/saga-ai/saga-lsp/runs"
)

// The warm caches are the user's, found as their tools find them, and
// never a folder a story writes: not in the repository, not in saga-lsp's
// cache root, not one a worker marked "none".
func TestFindWarm(t *testing.T) {
	home, root, xdg := t.TempDir(), t.TempDir(), t.TempDir()
	bin := filepath.Join(t.TempDir(), "saga lsp") // a space: quoted for the go command
	os.WriteFile(bin, nil, 0o755)
	vars := map[string]string{"HOME": home, "XDG_CACHE_HOME": xdg, runs.EnvBin: bin}
	env := func(k string) string { return vars[k] }
	mk := func(p string) string { os.MkdirAll(p, 0o755); return p }

	// Go's default place; npm's.
	gocache, npm := mk(filepath.Join(xdg, "go-build")), mk(filepath.Join(home, ".npm"))
	if w := FindWarm(root, env); w.Go != gocache || w.Npm != npm || w.Prog != bin {
		t.Errorf("defaults: %+v", w)
	}
	// `go env -w GOCACHE=…` (the go env file), then $GOCACHE.
	written := mk(filepath.Join(t.TempDir(), "written"))
	mk(filepath.Join(home, ".config", "go"))
	vars["XDG_CACHE_HOME"] = ""
	os.WriteFile(filepath.Join(home, ".config", "go", "env"), []byte("GOCACHE="+written+"\n"), 0o644)
	if w := FindWarm(root, env); w.Go != written {
		t.Errorf("the go env file's GOCACHE: %+v", w)
	}
	vars["GOCACHE"] = gocache
	if w := FindWarm(root, env); w.Go != gocache {
		t.Errorf("$GOCACHE: %+v", w)
	}
	// Never a cache in the repository or saga-lsp's cache root (a story's),
	// nor one that holds them; nor when a worker said none.
	vars["XDG_CACHE_HOME"] = xdg
	for _, p := range []string{mk(filepath.Join(root, ".cache")), mk(filepath.Join(xdg, "saga-lsp", "repo", "agent", "s", "go-build")), xdg, "/nonexistent"} {
		vars["GOCACHE"], vars["npm_config_cache"] = p, p
		if w := FindWarm(root, env); w.Go != "" || w.Npm != "" {
			t.Errorf("%s taken as a warm cache: %+v", p, w)
		}
	}
	vars["GOCACHE"], vars["npm_config_cache"] = gocache, ""
	vars[runs.EnvWarmGoCache] = "none"
	if w := FindWarm(root, env); w.Go != "" {
		t.Errorf("none: %+v", w)
	}
	vars[runs.EnvWarmGoCache] = gocache
	w := FindWarm(root, env)
	if w.Go != gocache {
		t.Fatalf("handed down: %+v", w)
	}
	// The environment: the program quoted as the go command splits it;
	// without a warm cache GOCACHEPROG is empty, so a program of the
	// user's never gets the story's builds.
	story := filepath.Join(xdg, "saga-lsp", "repo", "agent", "s")
	want := "GOCACHEPROG='" + bin + "' __gocacheprog --upper " + story + "/go-build --lower " + gocache
	if env := CacheEnv(story, w); !slices.Contains(env, want) {
		t.Errorf("CacheEnv: %q, want %q", env, want)
	}
	if env := CacheEnv(story, Warm{}); !slices.Contains(env, "GOCACHEPROG=") {
		t.Errorf("CacheEnv without a warm cache: %q", env)
	}
	if _, ok := quoteArg(`it's "both"`); ok {
		t.Error("a word with both quotes cannot be given to the go command")
	}
	if got := (Warm{Go: gocache, Prog: `/a/it's "x"`}).goCacheProg(story); got != "" {
		t.Errorf("an unquotable program: %q", got)
	}
}
