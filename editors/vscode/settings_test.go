package vscode_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A setting that names a program for the extension to run is a machine
// setting: a repository's .vscode/settings.json (scope machine-overridable
// let it) would otherwise choose the binary VS Code starts as soon as the
// folder is opened. Read from package.json, so a new such setting is held
// to it too; the real editor's side is e2e.mjs's step 1.
func TestSettingsNamingProgramsAreMachineScoped(t *testing.T) {
	data, err := os.ReadFile("package.json")
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Contributes struct {
			Configuration struct {
				Properties map[string]struct {
					Type        any    `json:"type"`
					Scope       string `json:"scope"`
					Description string `json:"description"`
				} `json:"properties"`
			} `json:"configuration"`
		} `json:"contributes"`
		Capabilities struct {
			UntrustedWorkspaces *struct {
				Supported   any    `json:"supported"`
				Description string `json:"description"`
			} `json:"untrustedWorkspaces"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		t.Fatal(err)
	}
	namesProgram := regexp.MustCompile(`(?i)(path|command|cmd|program|binary|bin|executable|exe)$`)
	saysProgram := regexp.MustCompile(`(?i)\b(binary|executable|program to run|command to run)\b`)
	var programs []string
	for name, p := range pkg.Contributes.Configuration.Properties {
		if !namesProgram.MatchString(name) && !saysProgram.MatchString(p.Description) {
			continue
		}
		programs = append(programs, name)
		if p.Scope != "machine" {
			t.Errorf("%s names a program but its scope is %q: make it \"machine\", so no workspace can set it", name, p.Scope)
		}
	}
	if !strings.Contains(strings.Join(programs, " "), "saga.serverPath") {
		t.Fatalf("saga.serverPath not recognised as naming a program (found %q)", programs)
	}
	u := pkg.Capabilities.UntrustedWorkspaces
	if u == nil || u.Supported != false || !strings.Contains(u.Description, "saga.serverPath") {
		t.Errorf("capabilities.untrustedWorkspaces = %+v: want supported false, saying saga.serverPath never comes from the workspace", u)
	}
	// The extension reads it as a machine setting too: the user's value only.
	srcs, err := filepath.Glob("src/*.ts")
	if err != nil || len(srcs) == 0 {
		t.Fatalf("no src/*.ts (%v)", err)
	}
	var src []byte
	for _, f := range srcs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src = append(src, b...)
	}
	if !strings.Contains(string(src), "inspect<string>('serverPath')?.globalValue") ||
		regexp.MustCompile(`\.get(<[^>]*>)?\('serverPath'`).Match(src) {
		t.Error("src/*.ts must read saga.serverPath with inspect(…).globalValue, never get('serverPath')")
	}
}
