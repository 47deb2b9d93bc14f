package worker

import "strings"

// agentEnviron is the worker's environment as a headless run inherits it,
// without the credentials that are the worker's own: GitHub's tokens (the
// worker's gh and pushes use them; in a GitHub Actions job the job token
// is one), the runner's tokens, and git configuration given through the
// environment (a credential helper for the worker's pushes, an auth
// header). The agent — claude, its hooks, its Bash — keeps only what
// claude needs (ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN).
func agentEnviron(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if !workerCredential(k) {
			out = append(out, kv)
		}
	}
	return out
}

// workerCredential tells whether the variable k is kept from the agent.
func workerCredential(k string) bool {
	switch k {
	case "GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN",
		"ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL",
		"GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS", "GIT_ASKPASS":
		return true
	}
	return strings.HasPrefix(k, "GIT_CONFIG_KEY_") || strings.HasPrefix(k, "GIT_CONFIG_VALUE_")
}
