package agentsim

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// --setting-sources limits the settings files a run loads (user =
// $CLAUDE_CONFIG_DIR/settings.json, project = <cwd>/.claude/settings.json,
// local = <cwd>/.claude/settings.local.json); --settings always loads.
// .mcp.json is read only with project settings and without
// --strict-mcp-config. Outcomes read off 2.1.330 runs with the same files.
func TestSettingSources(t *testing.T) {
	hook := func(f *fixture, name string) string {
		return settingsJSON(map[string][][2]string{"SessionStart": {{"", "echo " + name + " >> " + shellQuote(filepath.Join(f.root, "sources.log"))}}})
	}
	cases := []struct {
		args    []string
		loaded  []string
		mcp     bool
		code    int
		message string
	}{
		{nil, []string{"flag", "local", "project", "user"}, true, 0, ""},
		{[]string{"--setting-sources", "user"}, []string{"flag", "user"}, false, 0, ""},
		{[]string{"--setting-sources", "project"}, []string{"flag", "project"}, true, 0, ""},
		{[]string{"--setting-sources", "local"}, []string{"flag", "local"}, false, 0, ""},
		{[]string{"--setting-sources", "user,local"}, []string{"flag", "local", "user"}, false, 0, ""},
		{[]string{"--setting-sources", "user, project"}, []string{"flag", "project", "user"}, true, 0, ""},
		{[]string{"--setting-sources", ""}, []string{"flag"}, false, 0, ""},
		{[]string{"--strict-mcp-config"}, []string{"flag", "local", "project", "user"}, false, 0, ""},
		{[]string{"--setting-sources", "user", "--strict-mcp-config"}, []string{"flag", "user"}, false, 0, ""},
		{[]string{"--setting-sources", "user,foo"}, nil, false, 1,
			"Error processing --setting-sources: Invalid setting source: foo. Valid options are: user, project, local\n"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			f := newFixture(t)
			hydrate(f)
			f.write("config/settings.json", hook(f, "user"))
			f.write("project/.claude/settings.json", hook(f, "project"))
			f.write("project/.claude/settings.local.json", hook(f, "local"))
			f.write("project/.mcp.json", `{"mcpServers":{"planted":{"command":"/bin/false"}}}`)
			r := f.run("idle", append(workerArgs(hook(f, "flag")), c.args...))
			if r.code != c.code || (c.message != "" && r.stderr != c.message) {
				t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
			}
			if c.code != 0 {
				return
			}
			data, _ := os.ReadFile(filepath.Join(f.root, "sources.log"))
			loaded := strings.Fields(string(data))
			sort.Strings(loaded)
			if !reflect.DeepEqual(loaded, c.loaded) {
				t.Errorf("loaded %v, want %v", loaded, c.loaded)
			}
			mcp := initLine(t, r)["mcp_servers"].([]any)
			want := []any{}
			if c.mcp {
				want = []any{map[string]any{"name": "planted", "status": "failed", "source": "project"}}
			}
			if !reflect.DeepEqual(mcp, want) {
				t.Errorf("mcp_servers %v, want %v", mcp, want)
			}
		})
	}
}

// --mcp-config servers are "dynamic"; a missing file is an error (exit 1).
func TestMCPConfigFlag(t *testing.T) {
	f := newFixture(t)
	r := f.run("idle", append(workerArgs(`{}`), "--strict-mcp-config", "--mcp-config", `{"mcpServers":{"b":{"command":"x"},"a":{"command":"y"}}}`))
	if r.code != 0 || !strings.Contains(r.stdout, `"mcp_servers":[{"name":"a","status":"failed","source":"dynamic"},{"name":"b","status":"failed","source":"dynamic"}]`) {
		t.Errorf("exit %d\n%s", r.code, r.stdout)
	}
	r = f.run("idle", append(workerArgs(`{}`), "--mcp-config", "missing.json"))
	if r.code != 1 || r.stderr != "Error: Invalid MCP configuration:\nMCP config file not found: "+filepath.Join(f.project, "missing.json")+"\n" {
		t.Errorf("exit %d stderr %q", r.code, r.stderr)
	}
}
