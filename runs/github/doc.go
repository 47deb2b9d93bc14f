// Package github is the GitHub Actions backend: a story run by saga-lsp's
// worker in a job on a GitHub-hosted runner, ending as a pull request
// (docs/github-actions.md).
//
//   - workflow.go: the workflow every such job runs, saga-story.yml — its
//     inputs, its run-name (how a dispatched run is found again), how it
//     installs saga-lsp and Claude Code, confines the agent and keeps the
//     job's token from it — rendered from one template, with a digest that
//     tells a file saga-lsp wrote from one a person edited;
//   - install.go: `saga-lsp install --github-actions` writing, updating and
//     removing it, never over a person's edits unless forced;
//   - ready.go, dispatch.go: what every dispatch needs checked once
//     (CheckReady), dispatching a story (Backend, control's GitHub Actions
//     backend: its run found by its run-name and the dispatch's random id,
//     never twice while one is live), following its run;
//   - match.go: which run is a story's — the one its dispatch created (a
//     workflow_dispatch of the workflow's id on the branch dispatched on,
//     named with the dispatch's random id, then followed by its run id) —
//     and what its artifact's record must say, within bounds, to be
//     believed;
//   - state.go: the stories' state from GitHub (Runs, readmodel.Actions over
//     gh: the dispatched run found (match.go), a completed run's step,
//     artifact and pushed branch, cancelling).
package github
