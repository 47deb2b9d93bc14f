// Command claude is a stand-in for Claude Code's `claude` CLI in headless
// mode, for tests: it runs agentsim with the script named by
// $SAGA_STANDIN_SCRIPT (default "all"; see agentsim.Script), or, for the
// story a run is for ($SAGA_STORY_ID), by $SAGA_STANDIN_SCRIPTS
// ("story=script,story=script": different stories of one epic run behave
// differently).
//
// When $SAGA_STANDIN_LOG is set, each invocation first appends one JSON line
// to it: {"time","args","cwd","env"} where env holds the process
// environment minus variables whose names suggest secrets (TOKEN, SECRET,
// PASSWORD, KEY), so tests can assert the exact flags and environment a
// caller passed; "secrets" names those variables (never their values), so
// tests can assert which credentials reached the agent; on Linux "nice" and
// "autogroup" tell the priority it runs at (its nice value and its
// session's line in /proc/self/autogroup). A bare `--version`
// (the worker's check of the release before it starts anything) is not
// logged there — tests count the runs — but in $SAGA_STANDIN_VERSION_LOG
// when set, one line with its "nice" and "autogroup"; it answers
// $SAGA_STANDIN_VERSION when set, so that a test can play an older Claude
// Code.
package main

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/runs/agentsim"
)

func main() {
	if len(os.Args) == 2 && (os.Args[1] == "--version" || os.Args[1] == "-v") {
		logVersion()
		if v := os.Getenv("SAGA_STANDIN_VERSION"); v != "" {
			os.Stdout.WriteString(v + " (Claude Code)\n")
			return
		}
	} else {
		logInvocation()
	}
	os.Exit(agentsim.Main(os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr, script()))
}

func script() agentsim.Script {
	story := os.Getenv("SAGA_STORY_ID")
	for pair := range strings.SplitSeq(os.Getenv("SAGA_STANDIN_SCRIPTS"), ",") {
		if s, sc, ok := strings.Cut(pair, "="); ok && s == story {
			return agentsim.Script(sc)
		}
	}
	return agentsim.Script(os.Getenv("SAGA_STANDIN_SCRIPT"))
}

func logInvocation() {
	path := os.Getenv("SAGA_STANDIN_LOG")
	if path == "" {
		return
	}
	env := map[string]string{}
	secrets := []string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		up := strings.ToUpper(k)
		if strings.Contains(up, "TOKEN") || strings.Contains(up, "SECRET") ||
			strings.Contains(up, "PASSWORD") || strings.Contains(up, "KEY") {
			secrets = append(secrets, k)
			continue
		}
		env[k] = v
	}
	cwd, _ := os.Getwd()
	nice, autogroup := priority()
	line, err := json.Marshal(struct {
		Time      string            `json:"time"`
		Args      []string          `json:"args"`
		Cwd       string            `json:"cwd"`
		Env       map[string]string `json:"env"`
		Secrets   []string          `json:"secrets"`
		Nice      *int              `json:"nice,omitempty"`
		Autogroup string            `json:"autogroup,omitempty"`
	}{time.Now().UTC().Format(time.RFC3339Nano), os.Args[1:], cwd, env, secrets, nice, autogroup})
	if err == nil {
		appendLine(path, line)
	}
}

// logVersion appends the priority a bare --version ran at to
// $SAGA_STANDIN_VERSION_LOG, when set.
func logVersion() {
	path := os.Getenv("SAGA_STANDIN_VERSION_LOG")
	if path == "" {
		return
	}
	nice, autogroup := priority()
	line, err := json.Marshal(struct {
		Nice      *int   `json:"nice,omitempty"`
		Autogroup string `json:"autogroup,omitempty"`
	}{nice, autogroup})
	if err == nil {
		appendLine(path, line)
	}
}

// appendLine appends line to the log at path, best effort: a stand-in's
// log never fails its run.
func appendLine(path string, line []byte) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	f.Write(append(line, '\n'))
}

// priority is this process's nice value (field 19 of /proc/self/stat, the
// 17th after the command's closing parenthesis) and its autogroup line,
// where Linux tells them.
func priority() (nice *int, autogroup string) {
	if stat, err := os.ReadFile("/proc/self/stat"); err == nil {
		if i := strings.LastIndexByte(string(stat), ')'); i >= 0 {
			if f := strings.Fields(string(stat[i+1:])); len(f) > 16 {
				if n, err := strconv.Atoi(f[16]); err == nil {
					nice = &n
				}
			}
		}
	}
	if line, err := os.ReadFile("/proc/self/autogroup"); err == nil {
		autogroup = strings.TrimSpace(string(line))
	}
	return nice, autogroup
}
