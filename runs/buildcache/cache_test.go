package buildcache

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The stories' build caches live outside the git dir, one folder per
// story and kind, under a saga-lsp folder of the user's cache dir that no
// one else may write.
func TestCacheDirs(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".git"), 0o755)
	xdg := t.TempDir()
	env := func(k string) string { return map[string]string{"XDG_CACHE_HOME": xdg, "HOME": "/nonexistent"}[k] }
	agent, err := CacheDir(root, "s", env)
	if err != nil {
		t.Fatal(err)
	}
	checks, err := ChecksCacheDir(root, "s", env)
	if err != nil {
		t.Fatal(err)
	}
	top := filepath.Join(xdg, "saga-lsp")
	if !strings.HasPrefix(agent, top+"/") || !strings.HasSuffix(agent, "/agent/s") || filepath.Dir(filepath.Dir(agent)) != filepath.Dir(filepath.Dir(checks)) ||
		!strings.HasSuffix(checks, "/checks/s") || strings.HasPrefix(agent, root) {
		t.Errorf("caches %s and %s", agent, checks)
	}
	if fi, err := os.Stat(top); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("%s: %v %v", top, fi.Mode(), err)
	}
	os.Chmod(top, 0o777)
	if _, err := CacheDir(root, "s", env); err == nil || !strings.Contains(err.Error(), "chmod 700 "+top) {
		t.Errorf("a cache root anyone may write: %v", err)
	}
	if _, err := CacheDir(root, "../x", env); err == nil {
		t.Error("an invalid story name was accepted")
	}
}
