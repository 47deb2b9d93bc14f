package chaos

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ParamsTemplates are well-formed params of every method the language
// server knows (and one it does not) about the task file at taskURI
// holding text, to be mutated. The command is one that only writes in the
// workspace: commands that start processes are never sent.
func ParamsTemplates(taskURI, text string) map[string]string {
	doc := fmt.Sprintf(`{"uri":%q}`, taskURI)
	pos := `{"line":1,"character":9}`
	rng := `{"start":{"line":1,"character":9},"end":{"line":6,"character":2}}`
	tdp := fmt.Sprintf(`{"textDocument":%s,"position":%s}`, doc, pos)
	return map[string]string{
		"textDocument/hover":          tdp,
		"textDocument/completion":     tdp,
		"textDocument/definition":     tdp,
		"textDocument/references":     fmt.Sprintf(`{"textDocument":%s,"position":%s,"context":{"includeDeclaration":true}}`, doc, pos),
		"textDocument/prepareRename":  tdp,
		"textDocument/rename":         fmt.Sprintf(`{"textDocument":%s,"position":%s,"newName":"renamed"}`, doc, pos),
		"textDocument/documentSymbol": fmt.Sprintf(`{"textDocument":%s}`, doc),
		"workspace/symbol":            `{"query":"log"}`,
		"textDocument/codeAction":     fmt.Sprintf(`{"textDocument":%s,"range":%s,"context":{"diagnostics":[{"range":%s,"code":"schema","source":"saga","message":"m"}]}}`, doc, rng, rng),
		"textDocument/codeLens":       fmt.Sprintf(`{"textDocument":%s}`, doc),
		"workspace/executeCommand":    `{"command":"saga.createTask","arguments":[{"story":"add-logout-button","id":"chaos-task","subject":"S"}]}`,
		"no/such/method":              `{}`,
		// Notifications.
		"textDocument/didOpen":             fmt.Sprintf(`{"textDocument":{"uri":%q,"languageId":"json","version":1,"text":%s}}`, taskURI, quote(text)),
		"textDocument/didChange":           fmt.Sprintf(`{"textDocument":{"uri":%q,"version":2},"contentChanges":[{"range":%s,"text":"x"},{"text":%s}]}`, taskURI, rng, quote(text)),
		"textDocument/didClose":            fmt.Sprintf(`{"textDocument":%s}`, doc),
		"textDocument/didSave":             fmt.Sprintf(`{"textDocument":%s}`, doc),
		"workspace/didChangeWatchedFiles":  fmt.Sprintf(`{"changes":[{"uri":%q,"type":2},{"uri":%q,"type":3}]}`, taskURI, strings.Replace(taskURI, "/add-logout-button/", "/x/", 1)),
		"workspace/didChangeConfiguration": `{"settings":{}}`,
		"window/workDoneProgress/cancel":   `{"token":"t"}`,
		"$/cancelRequest":                  `{"id":1}`,
		"$/setTrace":                       `{"value":"verbose"}`,
		"initialized":                      `{}`,
		"no/such/notification":             `{}`,
	}
}

// Notifications are the methods of ParamsTemplates sent as notifications.
var Notifications = []string{"textDocument/didOpen", "textDocument/didChange", "textDocument/didClose", "textDocument/didSave",
	"workspace/didChangeWatchedFiles", "workspace/didChangeConfiguration", "window/workDoneProgress/cancel",
	"$/cancelRequest", "$/setTrace", "initialized", "no/such/notification"}

// Methods lists the methods of templates in order.
func Methods(templates map[string]string) []string {
	return slices.Sorted(maps.Keys(templates))
}
