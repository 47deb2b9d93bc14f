package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// TestInstallPrintsOwnClients: install tells how to install saga-lsp's own
// VS Code extension, Neovim plugin and Claude Code plugin — each name read
// from the client's own source, the Neovim spec the one its README's tests
// run as written (TestInstallSpecs), the Claude Code commands the README's
// — and no third-party client or hand-written autocmd.
func TestInstallPrintsOwnClients(t *testing.T) {
	root := testkit.ModuleRoot(t)
	var pkg struct{ Publisher, Name string }
	var market struct {
		Name    string
		Plugins []struct{ Name, Source string }
	}
	var manifest struct{ Name string }
	for file, v := range map[string]any{"editors/vscode/package.json": &pkg, ".claude-plugin/marketplace.json": &market,
		"editors/claude-code/.claude-plugin/plugin.json": &manifest} {
		if err := json.Unmarshal([]byte(testkit.ReadFile(t, filepath.Join(root, file))), v); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	if len(market.Plugins) != 1 || market.Plugins[0].Name != manifest.Name || market.Plugins[0].Source != "./editors/claude-code" {
		t.Fatalf("marketplace.json lists %+v, not the plugin %q of editors/claude-code", market.Plugins, manifest.Name)
	}
	dir := t.TempDir()
	testkit.Git(t, dir, "init", "-q")
	bin := testkit.Binary(t)
	cmd := exec.Command(bin, "install")
	cmd.Dir, cmd.Env = dir, append(testkit.CleanEnv(), "HOME="+t.TempDir(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	got := string(out)
	vscode := "code --install-extension " + pkg.Publisher + "." + pkg.Name
	claude := []string{"claude plugin marketplace add saga-ai/saga-lsp", "claude plugin install " + manifest.Name + "@" + market.Name}
	for _, want := range append([]string{vscode}, claude...) {
		if !strings.Contains(got, "  "+want+"\n") {
			t.Errorf("install does not print %q:\n%s", want, got)
		}
	}
	readme := testkit.ReadFile(t, filepath.Join(root, "README.md"))
	for _, want := range claude {
		if !strings.Contains(readme, "\n"+want) {
			t.Errorf("README.md's Claude Code plugin section does not run %q", want)
		}
	}
	if !strings.Contains(testkit.ReadFile(t, filepath.Join(root, "editors/nvim/README.md")), "```lua\n"+nvimLazySpec+"\n```") {
		t.Errorf("the lazy.nvim spec install prints is not editors/nvim/README.md's:\n%s", nvimLazySpec)
	}
	if !strings.Contains(got, "  "+strings.ReplaceAll(nvimLazySpec, "\n", "\n  ")+"\n") {
		t.Errorf("install does not print the lazy.nvim spec:\n%s", got)
	}
	if strings.Contains(got, "not on PATH") {
		t.Errorf("saga-lsp is on PATH, yet install says it is not:\n%s", got)
	}
	for _, never := range []string{"glspc", "nvim_create_autocmd", "vim.lsp.start("} {
		if strings.Contains(got, never) {
			t.Errorf("install still prints %q:\n%s", never, got)
		}
	}
}
