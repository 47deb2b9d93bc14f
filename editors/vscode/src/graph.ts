// SAGA: Show dependency graph — a webview per epic (or story) that draws
// the Mermaid graph of `saga-lsp plan <name> --format mermaid` (the server's
// showPlan answers it as `mermaid`; the CLI prints it when the server cannot):
// the items as nodes coloured by state (the epic runner's states during a
// run), blockers as edges, the critical path marked. Drawn by Mermaid
// bundled into the webview (out/webview/graph.js); nothing is fetched. Open
// graphs are drawn again whenever the model changes (a file under .saga/, a
// saga/* notification), so a run is seen live; a click on a node opens its
// story.json (task file in a story's graph).

import * as crypto from 'crypto';
import * as vscode from 'vscode';
import { SagaModel } from './model';
import { Serial } from './serial';
import type { GraphMessage } from './webview/message';

export type GraphKind = 'epic' | 'story';

const REDRAW_MS = 200;

/** The Mermaid text of a graph, or why there is none. */
export type GraphSource = (kind: GraphKind, id: string) => Promise<{ text: string; error?: string }>;

export class GraphPanels implements vscode.Disposable {
  private readonly panels = new Map<string, GraphPanel>();
  private readonly subscription: vscode.Disposable;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly model: SagaModel,
    private readonly source: GraphSource,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.subscription = model.onDidChange(() => {
      for (const p of this.panels.values()) {
        p.scheduleUpdate();
      }
    });
  }

  dispose(): void {
    this.subscription.dispose();
    for (const p of [...this.panels.values()]) {
      p.dispose();
    }
  }

  /** Opens (or reveals) the graph of an epic or a story. */
  async show(kind: GraphKind, id: string): Promise<void> {
    const key = `${kind}:${id}`;
    const open = this.panels.get(key);
    if (open) {
      open.reveal();
      await open.update();
      return;
    }
    const p = new GraphPanel(this.extensionUri, this.model, this.source, this.log, kind, id, () => this.panels.delete(key));
    this.panels.set(key, p);
    await p.update();
  }
}

class GraphPanel {
  private readonly panel: vscode.WebviewPanel;
  private timer: NodeJS.Timeout | undefined;
  private last = '';
  private ready = false;
  private readonly loads = new Serial(() => this.load());
  private message: GraphMessage | undefined;

  constructor(
    extensionUri: vscode.Uri,
    private readonly model: SagaModel,
    private readonly source: GraphSource,
    private readonly log: vscode.LogOutputChannel,
    private readonly kind: GraphKind,
    private readonly id: string,
    onDispose: () => void,
  ) {
    const media = vscode.Uri.joinPath(extensionUri, 'out', 'webview');
    // Beside the editor (the epic file, say), as Markdown previews open.
    this.panel = vscode.window.createWebviewPanel('saga.graph', `Graph: ${id}`, vscode.ViewColumn.Beside, {
      enableScripts: true,
      localResourceRoots: [media],
    });
    this.panel.webview.html = html(this.panel.webview, vscode.Uri.joinPath(media, 'graph.js'));
    this.panel.webview.onDidReceiveMessage((m: { type?: string; item?: string }) => {
      if (m.type === 'ready') {
        // A new page (first load, or shown again after being hidden): draw.
        this.ready = true;
        this.last = '';
        this.post();
      } else if (m.type === 'open' && typeof m.item === 'string') {
        void this.open(m.item);
      }
    });
    this.panel.onDidDispose(() => {
      if (this.timer) {
        clearTimeout(this.timer);
      }
      onDispose();
    });
  }

  dispose(): void {
    this.panel.dispose();
  }

  reveal(): void {
    this.panel.reveal();
  }

  /** Redraw soon: at most one update per REDRAW_MS, so a busy run still redraws while it goes. */
  scheduleUpdate(): void {
    if (this.timer) {
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.update();
    }, REDRAW_MS);
  }

  /** Gets the graph and sends it when it changed; one at a time. */
  update(): Promise<void> {
    return this.loads.run();
  }

  private async load(): Promise<void> {
    const { text, error } = await this.source(this.kind, this.id);
    if (error) {
      this.log.warn(`graph of ${this.id}: ${error}`);
    }
    this.message = { type: 'graph', title: this.title(), summary: this.summary(), ...parseMermaid(text), text, error };
    this.post();
  }

  private post(): void {
    if (!this.ready || !this.message) {
      return;
    }
    const key = JSON.stringify(this.message);
    if (key === this.last) {
      return;
    }
    this.last = key;
    void this.panel.webview.postMessage(this.message);
    this.log.debug(`graph of ${this.id} drawn: ${Object.keys(this.message.nodes).length} nodes`);
  }

  private title(): string {
    if (this.kind === 'epic') {
      const title = this.model.epics.get(this.id)?.title;
      return `Epic ${this.id}${title ? ` — ${title}` : ''}`;
    }
    const title = this.model.stories.get(this.id)?.title;
    return `Story ${this.id}${title ? ` — ${title}` : ''}`;
  }

  private summary(): string {
    if (this.kind === 'story') {
      const s = this.model.stories.get(this.id);
      if (!s) {
        return '';
      }
      return `${s.done}/${s.total} tasks · ${s.worker.running ? 'running' : s.status}`;
    }
    const run = this.model.epicRuns.get(this.id);
    if (!run) {
      return '';
    }
    const running = run.running.length ? ` · ▶ ${run.running.join(', ')}` : '';
    const cost = run.cost ? ` · $${run.cost.toFixed(2)}` : '';
    return `${run.done}/${run.total} stories · ${run.state === 'idle' ? 'not run yet' : run.state}${running}${cost}`;
  }

  private async open(item: string): Promise<void> {
    // Only an item of this graph (the webview names it).
    const known = this.kind === 'epic' ? this.model.stories.has(item) : !!this.model.stories.get(this.id)?.tasks.some((t) => t.id === item);
    if (!known) {
      this.log.warn(`graph of ${this.id}: no item ${JSON.stringify(item)} to open`);
      return;
    }
    const file = this.kind === 'epic' ? this.model.storyFile(item) : this.model.taskFile(this.id, item);
    // Beside the graph, so that it stays in sight.
    const column = this.panel.viewColumn === vscode.ViewColumn.One ? vscode.ViewColumn.Beside : vscode.ViewColumn.One;
    try {
      await vscode.window.showTextDocument(vscode.Uri.file(file), { viewColumn: column, preview: true });
      this.log.info(`graph of ${this.id}: opened ${item}`);
    } catch (e) {
      void vscode.window.showErrorMessage(`SAGA: cannot open ${file}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}

/**
 * What the webview needs besides the text: which item each node is (the id
 * that starts its label, `n1["shop--a · running<br/>…"]`), the state colours
 * in use (the classDefs), and the critical path's colour.
 */
export function parseMermaid(text: string): Pick<GraphMessage, 'nodes' | 'legend' | 'critical'> {
  const nodes: Record<string, string> = {};
  const legend: GraphMessage['legend'] = [];
  let critical = '';
  for (const line of text.split('\n')) {
    const node = /^\s*(n\d+)\["([^"]*?) · /.exec(line);
    if (node) {
      nodes[node[1]] = node[2];
      continue;
    }
    const def = /^\s*classDef (\S+) (.*)$/.exec(line);
    if (def) {
      const props = Object.fromEntries(def[2].split(',').map((p) => p.split(':') as [string, string]));
      if (def[1] === 'critical') {
        critical = props.stroke ?? '';
      } else {
        legend.push({ state: def[1], fill: props.fill ?? '', stroke: props.stroke ?? '' });
      }
    }
  }
  return { nodes, legend, critical };
}

function html(webview: vscode.Webview, script: vscode.Uri): string {
  const nonce = crypto.randomBytes(16).toString('base64');
  // Mermaid writes <style> into the SVG it draws: inline styles are allowed,
  // scripts only with the nonce, nothing from the network.
  const csp = [
    "default-src 'none'",
    `img-src ${webview.cspSource} data:`,
    `style-src ${webview.cspSource} 'unsafe-inline'`,
    `font-src ${webview.cspSource}`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<style>
  body { padding: 0 16px 16px; color: var(--vscode-foreground); font-family: var(--vscode-font-family); }
  header { position: sticky; top: 0; background: var(--vscode-editor-background); padding: 10px 0 6px; }
  h1 { font-size: 1.2em; margin: 0 0 4px; font-weight: 600; }
  #summary { color: var(--vscode-descriptionForeground); }
  #legend { display: flex; flex-wrap: wrap; gap: 4px 14px; margin-top: 6px; font-size: 0.9em; }
  #legend .state { display: inline-flex; align-items: center; gap: 5px; }
  #legend i { display: inline-block; width: 14px; height: 10px; border: 1px solid; border-radius: 2px; }
  #legend i.critical { background: transparent; border-width: 3px; }
  #problem { color: var(--vscode-errorForeground); white-space: pre-wrap; }
  #graph { margin-top: 8px; }
  #graph g.node { cursor: pointer; }
  #graph g.node:focus { outline: none; }
  #graph g.node:focus rect, #graph g.node:hover rect { filter: brightness(0.93); }
</style>
</head>
<body>
<header>
  <h1 id="title"></h1>
  <div id="summary"></div>
  <div id="legend"></div>
</header>
<div id="problem" hidden></div>
<div id="graph"></div>
<script nonce="${nonce}" src="${webview.asWebviewUri(script)}"></script>
</body>
</html>`;
}
