package lsp

import (
	"encoding/json"
	"os"
	"slices"

	"go.lsp.dev/protocol"

	"github.com/saga-ai/saga-lsp/store"
)

// clientInfo is what the server remembers of the client's capabilities and
// initializationOptions.
type clientInfo struct {
	name                string
	watchedFilesDynamic bool
	resourceRename      bool
	resourceCreate      bool
	documentChanges     bool
	workDoneProgress    bool
	codeLensRefresh     bool
	showDocument        bool
	hierarchicalSymbols bool
	snippets            bool
	sagaNotifications   bool
	commandPrefix       string
}

// initOptions are saga-lsp's initializationOptions (docs/protocol-extensions.md).
type initOptions struct {
	SagaNotifications bool   `json:"sagaNotifications"`
	CommandPrefix     string `json:"commandPrefix"`
}

func (s *Server) initialize(params json.RawMessage) (any, error) {
	var p protocol.InitializeParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	ci := readClientInfo(&p)
	root := rootOf(&p)
	if root != "" {
		if r, err := store.FindRoot(root); err == nil {
			root = r
		}
	}
	s.mu.Lock()
	s.client = ci
	s.snap = emptySnapshot(root)
	s.phase = phaseRunning
	s.mu.Unlock()
	s.log.Info("initialize", "client", ci.name, "root", root)
	return initializeResult(ci, s.version, s.runSetupFor(root).SessionDir), nil
}

func readClientInfo(p *protocol.InitializeParams) clientInfo {
	ci := clientInfo{name: p.ClientInfo.Name, commandPrefix: "saga."}
	c := p.Capabilities
	if w := c.Workspace; w != nil {
		if d := w.DidChangeWatchedFiles; d != nil && d.DynamicRegistration != nil {
			ci.watchedFilesDynamic = *d.DynamicRegistration
		}
		if e := w.WorkspaceEdit; e != nil {
			ci.documentChanges = e.DocumentChanges != nil && *e.DocumentChanges
			ci.resourceRename = slices.Contains(e.ResourceOperations, protocol.ResourceOperationKindRename)
			ci.resourceCreate = slices.Contains(e.ResourceOperations, protocol.ResourceOperationKindCreate)
		}
		if l := w.CodeLens; l != nil && l.RefreshSupport != nil {
			ci.codeLensRefresh = *l.RefreshSupport
		}
	}
	if w := c.Window; w != nil {
		ci.workDoneProgress = w.WorkDoneProgress != nil && *w.WorkDoneProgress
		ci.showDocument = w.ShowDocument != nil && w.ShowDocument.Support
	}
	if t := c.TextDocument; t != nil {
		if d := t.DocumentSymbol; d != nil && d.HierarchicalDocumentSymbolSupport != nil {
			ci.hierarchicalSymbols = *d.HierarchicalDocumentSymbolSupport
		}
		if cc := t.Completion; cc != nil && cc.CompletionItem != nil && cc.CompletionItem.SnippetSupport != nil {
			ci.snippets = *cc.CompletionItem.SnippetSupport
		}
	}
	if len(p.InitializationOptions) > 0 {
		var o initOptions
		if json.Unmarshal(p.InitializationOptions, &o) == nil {
			ci.sagaNotifications = o.SagaNotifications
			if o.CommandPrefix != "" {
				ci.commandPrefix = o.CommandPrefix
			}
		}
	}
	return ci
}

// rootOf picks the workspace folder: the first workspace folder, else
// rootUri, else rootPath, else the working directory.
func rootOf(p *protocol.InitializeParams) string {
	if folders, ok := p.WorkspaceFolders.Get(); ok && len(folders) > 0 {
		return folders[0].URI.FsPath()
	}
	if p.RootURI != nil && p.RootURI.FsPath() != "" {
		return p.RootURI.FsPath()
	}
	if rp, ok := p.RootPath.Get(); ok && rp != "" {
		return rp
	}
	wd, _ := os.Getwd()
	return wd
}

// experimental is the server's own capabilities (docs/protocol-extensions.md):
// the session dir, so that clients never compute it.
type experimental struct {
	Saga struct {
		SessionDir string `json:"sessionDir"`
	} `json:"saga"`
}

func initializeResult(ci clientInfo, version, sessionDir string) *protocol.InitializeResult {
	var x experimental
	x.Saga.SessionDir = sessionDir
	exp, _ := json.Marshal(x)
	yes := true
	change := protocol.TextDocumentSyncKindIncremental
	return &protocol.InitializeResult{
		ServerInfo: protocol.ServerInfo{Name: "saga-lsp", Version: protocol.NewOptional(version)},
		Capabilities: protocol.ServerCapabilities{
			PositionEncoding: protocol.PositionEncodingKindUTF16,
			TextDocumentSync: &protocol.TextDocumentSyncOptions{
				OpenClose: &yes,
				Change:    &change,
				Save:      protocol.Boolean(true),
			},
			HoverProvider:      protocol.Boolean(true),
			DefinitionProvider: protocol.Boolean(true),
			ReferencesProvider: protocol.Boolean(true),
			CompletionProvider: &protocol.CompletionOptions{
				TriggerCharacters: []string{"\"", ":", ",", "["},
			},
			RenameProvider:          &protocol.RenameOptions{PrepareProvider: &yes},
			DocumentSymbolProvider:  protocol.Boolean(true),
			WorkspaceSymbolProvider: protocol.Boolean(true),
			CodeActionProvider: &protocol.CodeActionOptions{
				CodeActionKinds: []protocol.CodeActionKind{protocol.CodeActionKindQuickFix, protocol.CodeActionKindSource},
			},
			CodeLensProvider: &protocol.CodeLensOptions{},
			ExecuteCommandProvider: protocol.ExecuteCommandOptions{
				Commands: commandNames(ci.commandPrefix),
			},
			Experimental: exp,
		},
	}
}
