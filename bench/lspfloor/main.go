// Command lspfloor is the language server's floor in BenchmarkEpic200
// (docs/architecture.md#budgets): a process that speaks LSP's frames over
// stdio and does nothing else — each request answered at once, each
// textDocument/didChange answered by an empty publishDiagnostics of its
// version — so that a keystroke and a lens request sent to it, beside the
// server's on the same loaded cores, measure what those cores make of any
// editor-facing process before it does any work.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/sourcegraph/jsonrpc2"
)

type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method"`
	Params struct {
		TextDocument struct {
			URI     string `json:"uri"`
			Version *int   `json:"version"`
		} `json:"textDocument"`
	} `json:"params"`
}

func main() {
	// The frames as the tests' client reads and writes them.
	codec := jsonrpc2.VSCodeObjectCodec{}
	in, out := bufio.NewReader(os.Stdin), bufio.NewWriter(os.Stdout)
	for {
		var m message
		if err := codec.ReadObject(in, &m); err != nil {
			if err != io.EOF {
				fmt.Fprintln(os.Stderr, "lspfloor:", err)
				os.Exit(1)
			}
			return
		}
		var reply any
		switch {
		case m.Method == "exit":
			return
		case m.ID != nil && m.Method == "initialize":
			reply = map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"capabilities": map[string]any{}}}
		case m.ID != nil && m.Method == "textDocument/codeLens":
			reply = map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": []any{}}
		case m.ID != nil:
			reply = map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": nil}
		case m.Method == "textDocument/didChange" || m.Method == "textDocument/didOpen":
			reply = map[string]any{"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": map[string]any{
				"uri": m.Params.TextDocument.URI, "version": m.Params.TextDocument.Version, "diagnostics": []any{}}}
		default:
			continue
		}
		err := codec.WriteObject(out, reply)
		if err == nil {
			err = out.Flush()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "lspfloor:", err)
			os.Exit(1)
		}
	}
}
