// Settings: the settings files and --settings a run loads, and what the
// simulation reads from them (hooks, permission rules, the sandbox).

package agentsim

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// settingsDoc is the part of a settings file (or a plugin's hooks.json) the
// simulation reads.
type settingsDoc struct {
	Hooks           map[string][]settingsGroup `json:"hooks"`
	DisableAllHooks bool                       `json:"disableAllHooks"`
	Sandbox         *sandboxSettings           `json:"sandbox"`
	Permissions     struct {
		Allow       []string `json:"allow"`
		Deny        []string `json:"deny"`
		DefaultMode string   `json:"defaultMode"`
	} `json:"permissions"`
}

type settingsGroup struct {
	Matcher string `json:"matcher"`
	Hooks   []struct {
		Type      string   `json:"type"`
		Command   string   `json:"command"`
		Timeout   *float64 `json:"timeout"`
		OnFailure string   `json:"onFailure"`
	} `json:"hooks"`
}

// readSettings parses a settings file; missing files give (nil, nil).
func readSettings(path string) (*settingsDoc, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	doc := &settingsDoc{}
	if err := json.Unmarshal(data, doc); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return doc, nil
}

// loadSettings reads the settings sources in Claude Code's order — user,
// project, local (each unless --setting-sources leaves it out), then the
// --settings flag — and the plugins given with --plugin-dir, and decides
// the sandbox. A broken user/project/local file is reported on stderr and
// skipped; a broken --settings value is an error.
func (s *session) loadSettings() error {
	sources, err := settingSources(s.args)
	if err != nil {
		return err
	}
	s.sources = sources
	var docs []sourcedDoc
	for _, f := range []struct{ source, path string }{
		{"user", filepath.Join(s.configDir, "settings.json")},
		{"project", filepath.Join(s.cwd, ".claude", "settings.json")},
		{"local", filepath.Join(s.cwd, ".claude", "settings.local.json")},
	} {
		if !sources[f.source] {
			continue
		}
		doc, err := readSettings(f.path)
		if err != nil {
			fmt.Fprintf(s.stderr, "Settings error: ignoring %v\n", err)
			continue
		}
		if doc != nil {
			docs = append(docs, sourcedDoc{f.source, doc})
		}
	}
	if v := s.args.settings; v != "" {
		doc := &settingsDoc{}
		if strings.HasPrefix(strings.TrimSpace(v), "{") {
			if err := json.Unmarshal([]byte(v), doc); err != nil {
				return fmt.Errorf("Error: Invalid JSON provided to --settings: %v", err)
			}
		} else {
			p := v
			if !filepath.IsAbs(p) {
				p = filepath.Join(s.cwd, p)
			}
			d, err := readSettings(p)
			if err != nil {
				return fmt.Errorf("Error: Invalid settings file %s: %v", v, err)
			}
			if d == nil {
				return fmt.Errorf("Error: Settings file not found: %s", p)
			}
			doc = d
		}
		docs = append(docs, sourcedDoc{"flag", doc})
	}
	for _, d := range docs {
		s.allowRules = append(s.allowRules, d.doc.Permissions.Allow...)
		s.denyRules = append(s.denyRules, d.doc.Permissions.Deny...)
		if d.doc.Permissions.DefaultMode != "" {
			s.defaultMode = d.doc.Permissions.DefaultMode
		}
	}
	s.decideSandbox(docs)
	if s.bare {
		return nil
	}
	for _, d := range docs {
		s.addHooks(d.doc, "")
	}
	for _, dir := range s.args.pluginDirs {
		s.loadPlugin(dir)
	}
	return nil
}

// settingSources are the settings files a run loads: all three, or those
// --setting-sources lists (comma separated, blanks trimmed, "" for none).
func settingSources(a *cliArgs) (map[string]bool, error) {
	if !a.haveSources {
		return map[string]bool{"user": true, "project": true, "local": true}, nil
	}
	sources := map[string]bool{}
	for _, src := range strings.Split(a.settingSources, ",") {
		switch src = strings.TrimSpace(src); src {
		case "":
		case "user", "project", "local":
			sources[src] = true
		default:
			return nil, fmt.Errorf("Error processing --setting-sources: Invalid setting source: %s. Valid options are: user, project, local", src)
		}
	}
	return sources, nil
}
