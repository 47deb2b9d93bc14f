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
// The Mermaid text on screen: a graph whose text did not change (a new
// summary, a cost) keeps its nodes, so a click in progress is not lost.
let drawnText = '';

window.addEventListener('message', (e: MessageEvent<Graph>) => {
  if (e.data?.type === 'graph') {
    latest = e.data;
    void drawLatest();
  }
});
vscode.postMessage({ type: 'ready' });

// Opening a node is handled on the graph's container, which outlives every
// redraw: a press that began on a node a redraw then replaced still opens
// the node under the pointer when it is released (a DOM "click" needs both
// halves on one element, and a live run redraws often).
const itemAt = (target: EventTarget | null): string | undefined =>
  target instanceof Element ? (target.closest<SVGGElement>('g.node')?.dataset.item ?? undefined) : undefined;
let press: { x: number; y: number } | undefined;
el('graph').addEventListener('pointerdown', (e) => {
  press = e.button === 0 ? { x: e.clientX, y: e.clientY } : undefined;
});
el('graph').addEventListener('pointerup', (e) => {
  const from = press;
  press = undefined;
  // A drag is not a click.
  if (!from || e.button !== 0 || Math.abs(e.clientX - from.x) > 5 || Math.abs(e.clientY - from.y) > 5) {
    return;
  }
  const item = itemAt(e.target);
  if (item) {
    vscode.postMessage({ type: 'open', item });
  }
});
el('graph').addEventListener('keydown', (e) => {
  const item = itemAt(e.target);
  if (item && (e.key === 'Enter' || e.key === ' ')) {
    e.preventDefault();
    vscode.postMessage({ type: 'open', item });
  }
});

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
  if (g.text === drawnText && !g.error) {
    return;
  }
  try {
    const { svg } = await mermaid.render(`saga-graph-${++rendered}`, g.text);
    out.innerHTML = svg;
    drawnText = g.text;
  } catch (err) {
    problem.textContent = `Mermaid could not draw the graph: ${err instanceof Error ? err.message : String(err)}`;
    problem.hidden = false;
    drawnText = '';
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
