// MCP servers: which ones a run is configured with, for system/init. The
// simulation starts none.

package agentsim

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// mcpServers lists the configured MCP servers as system/init shows them:
// the project's .mcp.json (only when project settings load and without
// --strict-mcp-config; a broken one is ignored), then each --mcp-config
// (inline JSON, else a file relative to the working directory). Each is
// listed {"name","status":"failed","source"} — what 2.1.330 shows for a
// server that does not start, as none does here. A --mcp-config that is
// neither JSON nor a file is an error.
func (s *session) mcpServers() ([]any, error) {
	out := []any{}
	add := func(data []byte, source string) bool {
		var doc struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		}
		if json.Unmarshal(data, &doc) != nil {
			return false
		}
		names := make([]string, 0, len(doc.MCPServers))
		for n := range doc.MCPServers {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			out = append(out, newObj("name", n, "status", "failed", "source", source))
		}
		return true
	}
	if s.sources["project"] && !s.args.strictMCP {
		if data, err := os.ReadFile(filepath.Join(s.cwd, ".mcp.json")); err == nil {
			add(data, "project")
		}
	}
	for _, c := range s.args.mcpConfigs {
		if add([]byte(c), "dynamic") {
			continue
		}
		p := c
		if !filepath.IsAbs(p) {
			p = filepath.Join(s.cwd, p)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("Error: Invalid MCP configuration:\nMCP config file not found: %s", p)
		}
		if !add(data, "dynamic") {
			return nil, fmt.Errorf("Error: Invalid MCP configuration:\n%s: not a JSON object with mcpServers", p)
		}
	}
	return out, nil
}
