package nvim_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

type diagnostic struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func hasCode(ds []diagnostic, code string) bool {
	for _, d := range ds {
		if d.Code == code {
			return true
		}
	}
	return false
}

// lsp/saga_lsp.lua the way Neovim 0.11+ loads lsp/<name>.lua (test/native.lua;
// stand-ins for vim.lsp.config/enable on older Neovim, written after 0.11's
// documented behaviour).
func TestNativeConfig(t *testing.T) {
	mistakes := testkit.CopyExample(t, "mistakes")
	var res struct {
		scriptResult
		Stubbed bool `json:"stubbed"`
		Client  *struct {
			Name        string          `json:"name"`
			Root        string          `json:"root"`
			Cmd         []string        `json:"cmd"`
			InitOptions json.RawMessage `json:"init_options"`
		} `json:"client"`
		Diagnostics   []diagnostic `json:"diagnostics"`
		OtherAttached bool         `json:"other_attached"`
		Plan          *struct {
			Err    string `json:"err"`
			Client string `json:"client"`
			Text   string `json:"text"`
		} `json:"plan"`
	}
	runScript(t, "native.lua", mistakes, 60*time.Second, []string{"SAGA_MISTAKES=" + mistakes}, &res)
	if res.Error != "" {
		t.Fatalf("native.lua: %s", res.Error)
	}
	t.Logf("Neovim %s, vim.lsp.config stood in for: %v", res.NvimVersion, res.Stubbed)
	c := res.Client
	if c == nil || c.Name != "saga_lsp" || c.Root != mistakes {
		t.Fatalf("client %+v: want saga_lsp rooted at %s", c, mistakes)
	}
	if len(c.Cmd) < 2 || c.Cmd[0] != testkit.Binary(t) || c.Cmd[1] != "serve" || !slicesContain(c.Cmd, "--log-file") {
		t.Errorf("cmd %q: want setup()'s options (the server, serve, --log-file)", c.Cmd)
	}
	var io struct {
		SagaNotifications bool `json:"sagaNotifications"`
	}
	if json.Unmarshal(c.InitOptions, &io) != nil || !io.SagaNotifications {
		t.Errorf("init_options %s: want sagaNotifications", c.InitOptions)
	}
	if !hasCode(res.Diagnostics, "unknown-dependency") {
		t.Errorf("diagnostics %+v: want unknown-dependency", res.Diagnostics)
	}
	if res.OtherAttached {
		t.Error("a JSON file outside .saga/ got a saga_lsp client")
	}
	if p := res.Plan; p == nil || p.Err != "" || p.Client != "saga_lsp" || !strings.Contains(p.Text, "EXECUTION PLAN") {
		t.Errorf("showPlan through the native client: %+v", p)
	}
}

// The README's lazy.nvim and vim-plug specs, as written, loading the plugin
// from a repository clone's sub-folder (test/install.lua).
func TestInstallSpecs(t *testing.T) {
	for _, spec := range []string{"lazy.nvim", "vim-plug"} {
		t.Run(spec, func(t *testing.T) {
			clone := t.TempDir()
			testkit.CopyInto(t, plugin(t), filepath.Join(clone, "editors", "nvim"))
			os.Remove(filepath.Join(clone, "editors", "nvim", "doc", "tags")) // as a fresh clone has it
			ws := testkit.CopyExample(t, "workspace")
			task := filepath.Join(ws, ".saga", "stories", "user-auth--api", "logout-endpoint.json")
			data := strings.Replace(testkit.ReadFile(t, task), `"blockedBy": ["login-endpoint"]`, `"blockedBy": ["logn-endpoint"]`, 1)
			if err := os.WriteFile(task, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
			var res struct {
				scriptResult
				Source              string       `json:"source"`
				Setup               bool         `json:"setup"`
				CommandsBeforeSetup *bool        `json:"commands_before_setup"`
				Commands            []int        `json:"commands"`
				TagsFile            bool         `json:"tags_file"`
				Help                string       `json:"help"`
				Diagnostics         []diagnostic `json:"diagnostics"`
			}
			runScript(t, "install.lua", ws, 60*time.Second, []string{"SAGA_SPEC=" + spec, "SAGA_CLONE=" + clone,
				"SAGA_README=" + filepath.Join(plugin(t), "README.md")}, &res)
			if res.Error != "" {
				t.Fatalf("install.lua: %s", res.Error)
			}
			t.Logf("the README's %s spec:\n%s", spec, res.Source)
			if !res.Setup || len(res.Commands) != 3 || res.Commands[0] != 2 || res.Commands[1] != 2 || res.Commands[2] != 2 {
				t.Errorf("after the spec: setup %v, :SagaRun/:SagaInfo/:SagaRestart %v", res.Setup, res.Commands)
			}
			if res.CommandsBeforeSetup != nil && !*res.CommandsBeforeSetup {
				t.Error("vim-plug: plugin/saga.lua did not define the commands before setup()")
			}
			if !res.TagsFile || res.Help != "saga.txt" {
				t.Errorf(":help saga-setup: %q, doc/tags generated %v", res.Help, res.TagsFile)
			}
			if !hasCode(res.Diagnostics, "unknown-dependency") {
				t.Errorf("diagnostics %+v: want unknown-dependency (saga-lsp from PATH)", res.Diagnostics)
			}
		})
	}
}
