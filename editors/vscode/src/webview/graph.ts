// The dependency-graph webview: draws the Mermaid text the extension sends
// (`saga-lsp plan --format mermaid`, states and critical path included) with
// Mermaid bundled into this script, and asks the extension to open an item's
// file when its node is clicked. It knows nothing of SAGA itself: which node
// is which item comes with each graph.

import mermaid from 'mermaid';
import type { GraphMessage as Graph } from './message';

interface VsCodeApi {
  postMessage(message: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const dark = document.body.classList.contains('vscode-dark') || document.body.classList.contains('vscode-high-contrast');
mermaid.initialize({ startOnLoad: false, securityLevel: 'strict', theme: dark ? 'dark' : 'default', flowchart: { useMaxWidth: true } });

const el = (id: string) => document.getElementById(id) as HTMLElement;
let rendered = 0;
let latest: Graph | undefined;
let drawing = false;

window.addEventListener('message', (e: MessageEvent<Graph>) => {
  if (e.data?.type === 'graph') {
    latest = e.data;
    void drawLatest();
  }
});
vscode.postMessage({ type: 'ready' });

/** Draws the newest graph; graphs that arrive while one is drawn only replace what is drawn next. */
async function drawLatest(): Promise<void> {
  if (drawing) {
    return;
  }
  drawing = true;
  try {
    while (latest) {
      const g = latest;
      latest = undefined;
      await draw(g);
    }
  } finally {
    drawing = false;
  }
}

async function draw(g: Graph): Promise<void> {
  el('title').textContent = g.title;
  el('summary').textContent = g.summary;
  legend(g);
  const out = el('graph');
  const problem = el('problem');
  problem.textContent = g.error ?? '';
  problem.hidden = !g.error;
  if (!g.text) {
    return;
  }
  try {
    const { svg } = await mermaid.render(`saga-graph-${++rendered}`, g.text);
    out.innerHTML = svg;
  } catch (err) {
    problem.textContent = `Mermaid could not draw the graph: ${err instanceof Error ? err.message : String(err)}`;
    problem.hidden = false;
    return;
  }
  for (const node of out.querySelectorAll<SVGGElement>('g.node')) {
    // Mermaid names a node's group <render id>-flowchart-<node id>-<n>.
    const m = /-flowchart-(.+)-\d+$/.exec(node.id);
    const item = m ? g.nodes[m[1]] : undefined;
    if (!item) {
      continue;
    }
    node.dataset.item = item;
    node.setAttribute('tabindex', '0');
    node.setAttribute('role', 'button');
    node.setAttribute('aria-label', `Open ${item}`);
    const open = () => vscode.postMessage({ type: 'open', item });
    node.addEventListener('click', open);
    node.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        open();
      }
    });
  }
  document.body.dataset.rendered = String(rendered);
}

function legend(g: Graph): void {
  const box = el('legend');
  box.replaceChildren();
  for (const { state, fill, stroke } of g.legend) {
    const item = document.createElement('span');
    item.className = 'state';
    const swatch = document.createElement('i');
    swatch.style.background = fill;
    swatch.style.borderColor = stroke;
    item.append(swatch, state);
    box.append(item);
  }
  if (g.critical) {
    const item = document.createElement('span');
    item.className = 'state';
    const swatch = document.createElement('i');
    swatch.className = 'critical';
    swatch.style.borderColor = g.critical;
    item.append(swatch, 'critical path');
    box.append(item);
  }
}
