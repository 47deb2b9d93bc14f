// Renders Mermaid diagrams with Mermaid itself (in jsdom, with a rough text
// measure, since jsdom lays nothing out). Reads a JSON array of diagram
// texts on stdin; prints a JSON array with, for each, what was drawn:
// {"nodes":[{"id","classes":[…],"lines":[…]}],"edges":[{"from","to",
// "classes":[…],"style","label"}]}, or {"error"} when Mermaid rejects it.
import { JSDOM } from 'jsdom';
import fs from 'node:fs';

const w = new JSDOM('<!doctype html><html><body></body></html>', { pretendToBeVisual: true }).window;
for (const k of ['window', 'document', 'navigator', 'DOMParser', 'Element', 'HTMLElement', 'SVGElement',
  'Node', 'MutationObserver', 'CSSStyleSheet', 'getComputedStyle']) {
  try { globalThis[k] ??= k === 'window' ? w : w[k]; } catch { /* read-only in this Node */ }
}
w.SVGElement.prototype.getBBox = function () {
  return { x: 0, y: 0, width: 8 * (this.textContent || '').length + 10, height: 20 };
};
w.SVGElement.prototype.getComputedTextLength = function () { return 8 * (this.textContent || '').length; };

const { default: mermaid } = await import('mermaid');
mermaid.initialize({ startOnLoad: false });
const results = [];
let n = 0;
for (const text of JSON.parse(fs.readFileSync(0, 'utf8'))) {
  try {
    await mermaid.parse(text);
    const { svg } = await mermaid.render(`g${n++}`, text);
    results.push(drawn(svg));
  } catch (e) {
    results.push({ error: e.message });
  }
}
console.log(JSON.stringify(results));

function drawn(svg) {
  const doc = new JSDOM(svg).window.document;
  const nodes = [...doc.querySelectorAll('g.node')].map((n) => {
    const label = n.querySelector('.nodeLabel');
    label.querySelectorAll('br').forEach((br) => br.replaceWith('\n'));
    return {
      id: n.id.replace(/^g\d+-flowchart-/, '').replace(/-\d+$/, ''),
      classes: n.getAttribute('class').split(/\s+/).filter((c) => c !== 'node' && c !== 'default'),
      lines: label.textContent.split('\n'),
    };
  });
  const labels = new Map([...doc.querySelectorAll('g.edgeLabel g.label')].map((l) => [l.getAttribute('data-id'), l.textContent]));
  const edges = [...doc.querySelectorAll('path.flowchart-link')].map((p) => {
    const id = p.getAttribute('data-id');
    const [, from, to] = id.match(/^L_(.+)_(.+)_\d+$/);
    return {
      from, to,
      classes: [...new Set(p.getAttribute('class').split(/\s+/))].filter((c) => /^edge-(thickness|pattern)-/.test(c)),
      style: p.getAttribute('style') || '',
      label: labels.get(id) || '',
    };
  });
  return { nodes, edges };
}
