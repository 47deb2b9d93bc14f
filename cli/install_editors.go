package cli

import (
	"fmt"
	"strings"

	"github.com/saga-ai/saga-lsp/runs/github"
)

// The project's own editor clients, as the README installs them; a test
// reads each name from its source (editors/vscode/package.json,
// .claude-plugin/marketplace.json, editors/claude-code's manifest,
// editors/nvim/README.md's lazy.nvim spec).
const (
	vscodeExtension   = "saga-ai.saga-lsp" // publisher.name
	claudeMarketplace = "saga-ai"
	claudePlugin      = "saga-lsp"
	nvimLazySpec      = `{
  'saga-ai/saga-lsp',
  lazy = false,
  config = function(plugin)
    vim.opt.rtp:append(plugin.dir .. '/editors/nvim')
    require('saga').setup({})
  end,
}`
)

// editorSetup is what install prints after the hooks: how to install
// saga-lsp's own VS Code extension, Neovim plugin and Claude Code plugin
// (README.md#editor-setup). bin is how editors should call saga-lsp: a
// path when saga-lsp on PATH is not this one (hook.EditorCommand).
func editorSetup(bin string) string {
	repo := strings.TrimPrefix(github.Module, "github.com/")
	var b strings.Builder
	fmt.Fprintf(&b, `Editors — saga-lsp's own clients (others: docs/editors.md in %s):

VS Code — the SAGA extension, with its own saga-lsp inside:

  code --install-extension %s

Neovim (0.7+) — the plugin in editors/nvim of %s, e.g. with lazy.nvim (vim-plug,
packer and Neovim 0.11's vim.lsp.enable: editors/nvim/README.md):

`, repo, vscodeExtension, repo)
	for _, line := range strings.Split(nvimLazySpec, "\n") {
		fmt.Fprintf(&b, "  %s\n", line)
	}
	if bin != "saga-lsp" {
		fmt.Fprintf(&b, "\n  saga-lsp is not on PATH: pass it to setup, require('saga').setup({ cmd = { %s } })\n", luaQuote(bin))
	}
	fmt.Fprintf(&b, `
  then :checkhealth saga.

Claude Code — the saga-lsp plugin (the same hooks, saga-lsp's diagnostics, skills):

  claude plugin marketplace add %s
  claude plugin install %s@%s

  It registers the hooks above itself: use either the plugin or these settings, not both.
`, repo, claudePlugin, claudeMarketplace)
	return b.String()
}

// luaQuote is s as a Lua string literal.
func luaQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`).Replace(s) + "'"
}
