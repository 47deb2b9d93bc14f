// SAGA dashboard: live updates over server-sent events (the page fetches
// itself again when the server says something changed, and morphdom
// changes what differs), confirmed
// actions, keyboard navigation, and the dependency graph laid out by dagre
// and drawn as SVG. Everything the server sends is text: it is put in the
// page with textContent or as the server's own escaped HTML, never built
// into markup here.
(() => {
  'use strict';
  const $ = (sel, root = document) => root.querySelector(sel);
  const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));
  const SVG = 'http://www.w3.org/2000/svg';

  // What tests and benchmarks wait for: the stream is connected, the
  // sequence of the last change seen, how many times the page applied a
  // fetch of itself (partials: of those, by parts), when the graph was last
  // drawn.
  const dash = { connected: false, seq: 0, refreshes: 0, partials: 0, outputs: 0, graphs: 0, lastRefresh: 0, graphAt: 0, layoutMs: 0 };
  window.sagaDashboard = dash;

  // ---------------------------------------------------------------------
  // Live updates

  let refreshing = false;
  let again = false;
  // The sums of the page shown (dashboard/parts.go), sent with each fetch
  // of itself: while the page's frame is the same, the server answers with
  // the parts that changed, and nothing when none did. Parsing and
  // comparing a 200-story epic's page whole at each change was most of the
  // page's time on loaded cores (docs/architecture.md#a-live-page-in-parts).
  let sums = '';

  function sumsOf(doc) {
    const e = $('#page-parts', doc);
    return e ? e.dataset.parts || '' : '';
  }

  async function refresh() {
    if (refreshing) {
      again = true;
      return;
    }
    refreshing = true;
    try {
      const headers = { 'X-Dashboard-Refresh': '1' };
      if (sums) headers['X-Dashboard-Parts'] = sums;
      const res = await fetch(location.href, { credentials: 'same-origin', cache: 'no-store', headers });
      if (!res.ok) return;
      let pairs;
      if ((res.headers.get('Content-Type') || '').startsWith('application/json')) {
        const j = await res.json();
        pairs = partsOf(j.parts || {});
        if (!pairs) {
          // The page is not the one its sums say: take it whole.
          sums = '';
          again = true;
          return;
        }
        sums = j.sums;
        dash.partials += pairs.length ? 1 : 0;
      } else {
        const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
        sums = sumsOf(doc);
        pairs = ['#banners', '#problem-count', '#main'].map((sel) => [$(sel), $(sel, doc)]).filter(([o, n]) => o && n);
      }
      if (pairs.length) {
        swap(pairs);
        dash.refreshes++;
        dash.lastRefresh = performance.now();
        document.dispatchEvent(new CustomEvent('saga:refreshed'));
      }
    } catch (e) {
      // Offline: the stream's reconnection fetches again.
    } finally {
      refreshing = false;
      if (again) {
        again = false;
        refresh();
      }
    }
  }

  // partsOf pairs the parts the server sent, by their index in the page,
  // with the page's elements they replace; null when one is not found as
  // the server named it.
  function partsOf(parts) {
    const pairs = [];
    const sent = Object.entries(parts);
    if (!sent.length) return pairs;
    const shown = $$('[data-part]');
    for (const [i, html] of sent) {
      const t = document.createElement('template');
      t.innerHTML = html;
      const n = t.content.firstElementChild;
      const o = shown[Number(i)];
      if (!n || !o || o.dataset.part !== n.dataset.part) return null;
      pairs.push([o, n]);
    }
    return pairs;
  }

  // keyOf names an element so that it can be found again in the new page.
  function keyOf(el) {
    if (!el || el === document.body) return null;
    if (el.id) return '#' + CSS.escape(el.id);
    if (el.matches('a[href]')) return 'a[href="' + CSS.escape(el.getAttribute('href')) + '"]';
    if (el.matches('summary')) {
      const d = el.closest('details');
      if (d && d.id) return '#' + CSS.escape(d.id) + ' > summary';
    }
    if (el.matches('.graph .node')) return '.graph .node[data-id="' + CSS.escape(el.dataset.id) + '"]';
    return null;
  }

  // swap puts each pair's new element in place of the page's: updated in
  // place by morphdom, only what changed is touched, so the browser lays
  // out a few nodes rather than the whole page (a 200-story epic's page,
  // rebuilt whole, took half a second a refresh on a loaded machine —
  // longer than the changes came), and what the reader holds stays: an
  // open <details>, the focus, the scroll, the drawn graph.
  function swap(pairs) {
    const focus = keyOf(document.activeElement);
    const open = new Set($$('details[open]').map((d) => d.id));
    const out = $('#output pre');
    const outState = out && { bottom: out.scrollTop + out.clientHeight >= out.scrollHeight - 4, top: out.scrollTop };
    // The graph's scroll is read only where the graph may be replaced:
    // reading it makes the browser lay the page out there and then, once
    // per update rather than once per frame.
    const graph = window.morphdom ? null : $('#graph');
    const graphScroll = graph && [graph.scrollLeft, graph.scrollTop];
    for (const [o, n] of pairs) morph(o, document.adoptNode(n));
    for (const id of open) {
      const d = document.getElementById(id);
      if (d && d.tagName === 'DETAILS') d.open = true;
    }
    const no = $('#output pre');
    if (no && no !== out) {
      if (outState) no.scrollTop = outState.bottom ? no.scrollHeight : outState.top;
      else no.scrollTop = no.scrollHeight;
    } else if (no && outState && outState.bottom) no.scrollTop = no.scrollHeight;
    drawGraph();
    const ng = $('#graph');
    if (ng && ng !== graph && graphScroll) [ng.scrollLeft, ng.scrollTop] = graphScroll;
    if (focus && keyOf(document.activeElement) !== focus) {
      const el = $(focus);
      if (el) el.focus({ preventScroll: true });
    }
  }

  function morph(o, n) {
    if (!window.morphdom) {
      o.replaceWith(n);
      return;
    }
    window.morphdom(o, n, {
      onBeforeElUpdated(from, to) {
        if (from.tagName === 'DETAILS' && from.open) to.open = true;
        if (from.id === 'graph') {
          // Its SVG is drawn here, not sent: only its data is taken.
          if (from.dataset.graph !== to.dataset.graph) from.dataset.graph = to.dataset.graph || '';
          return false;
        }
        return !from.isEqualNode(to);
      },
    });
  }

  let outputBusy = false;
  let outputAgain = false;

  async function refreshOutput() {
    const box = $('#output-box');
    if (!box) return;
    if (outputBusy) {
      outputAgain = true;
      return;
    }
    outputBusy = true;
    try {
      const res = await fetch(box.dataset.outputUrl, { credentials: 'same-origin', cache: 'no-store' });
      if (res.ok) {
        const pre = $('#output pre');
        const bottom = !pre || pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
        const top = pre ? pre.scrollTop : 0;
        const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
        const n = $('#output', doc);
        const o = $('#output');
        if (n && o) o.replaceWith(document.adoptNode(n));
        const np = $('#output pre');
        if (np) np.scrollTop = bottom ? np.scrollHeight : top;
        dash.outputs++;
      }
    } catch (e) {
      // the next change fetches again
    } finally {
      outputBusy = false;
      if (outputAgain) {
        outputAgain = false;
        refreshOutput();
      }
    }
  }

  function setLive(on) {
    const l = $('#live');
    dash.connected = on;
    if (!l) return;
    l.dataset.state = on ? 'live' : 'offline';
    l.textContent = on ? 'live' : 'offline — reconnecting';
  }

  function onChange(n) {
    const m = $('#main');
    const scope = m ? m.dataset.scope : '';
    const repo = m ? m.dataset.repo : '';
    const id = m ? m.dataset.id : '';
    const outputs = (n.output && n.output[repo]) || [];
    const onlyOutput = Object.keys(n.stories).length === 0 && Object.keys(n.epics).length === 0 && n.all.length === 0;
    if (scope === 'story' && outputs.includes(id)) refreshOutput();
    if (onlyOutput || scope === 'review' || scope === 'message') return;
    refresh();
  }

  // The page's events come from one stream per browser, shared by its
  // tabs through a SharedWorker (events.js): a browser allows 6 HTTP/1.1
  // connections to a host, so a stream per tab would leave the 7th tab
  // without one. Without SharedWorker (or if it fails) the page opens a
  // stream of its own. The stream is let go on pagehide and taken again on
  // pageshow, so a page kept in the back-forward cache holds nothing.
  const workerURL = (document.currentScript && document.currentScript.src.replace(/app\.js/, 'events.js')) || '/assets/events.js';
  let port = null;
  let direct = null;

  function hello(seq) {
    const rendered = Number(document.body.dataset.seq || 0);
    const missed = seq !== (dash.connected || dash.seq ? dash.seq : rendered);
    dash.seq = seq;
    setLive(true);
    if (missed) refresh();
  }

  function change(n) {
    dash.seq = n.seq;
    onChange(n);
  }

  function connectDirect() {
    const es = new EventSource('/events');
    es.addEventListener('hello', (e) => hello(JSON.parse(e.data).seq));
    es.addEventListener('change', (e) => change(JSON.parse(e.data)));
    es.onerror = () => setLive(false);
    direct = es;
  }

  function connect() {
    if (port || direct) return;
    if (!window.SharedWorker) {
      connectDirect();
      return;
    }
    let w;
    try {
      w = new SharedWorker(workerURL, { name: 'saga-dashboard-events' });
    } catch (e) {
      connectDirect();
      return;
    }
    w.onerror = () => {
      if (port === w.port) {
        port = null;
        connectDirect();
      }
    };
    port = w.port;
    port.onmessage = (e) => {
      const m = e.data;
      if (m.type === 'hello') hello(m.seq);
      else if (m.type === 'change') change(m.notice);
      else if (m.type === 'offline') setLive(false);
    };
    port.start();
  }

  function disconnect() {
    if (port) {
      port.postMessage('bye');
      port.close();
      port = null;
    }
    if (direct) {
      direct.close();
      direct = null;
    }
    setLive(false);
  }

  window.addEventListener('pagehide', disconnect);
  window.addEventListener('pageshow', connect);

  // ---------------------------------------------------------------------
  // Actions: confirmed in a dialog, sent as same-origin POSTs.

  function ask(question) {
    const d = $('#confirm');
    if (!d || !d.showModal) return Promise.resolve(window.confirm(question));
    $('#confirm-q').textContent = question;
    d.returnValue = '';
    d.showModal();
    $('#confirm-cancel').focus();
    return new Promise((resolve) => d.addEventListener('close', () => resolve(d.returnValue === 'ok'), { once: true }));
  }

  function toast(text, error) {
    const t = $('#toast');
    if (!t) return;
    const div = document.createElement('div');
    div.className = 'msg' + (error ? ' error' : '');
    div.textContent = text;
    t.appendChild(div);
    setTimeout(() => div.remove(), error ? 15000 : 8000);
  }

  function describe(f) {
    let q = f.dataset.confirm || 'Are you sure?';
    const extra = [];
    const mp = f.elements.maxParallel;
    if (mp && mp.value) extra.push(mp.value + ' at once');
    const mc = f.elements.maxCost;
    if (mc && mc.value) extra.push('at most $' + mc.value);
    const dry = f.elements.dryRun;
    if (dry && dry.checked) extra.push('dry run: the simulated agent');
    if (extra.length) q = q.replace(/\?$/, '') + ' (' + extra.join(', ') + ')?';
    return q;
  }

  async function send(f, quiet) {
    const body = new URLSearchParams(new FormData(f));
    body.set('confirm', 'yes');
    const buttons = $$('button', f);
    buttons.forEach((b) => (b.disabled = true));
    try {
      const res = await fetch(f.action, { method: 'POST', body, credentials: 'same-origin', headers: { Accept: 'application/json' } });
      let j;
      try {
        j = await res.json();
      } catch (e) {
        j = { ok: false, message: res.status + ' ' + res.statusText };
      }
      if (!quiet || !j.ok) toast(j.message, !j.ok);
    } catch (e) {
      toast('The dashboard did not answer: ' + e, true);
    } finally {
      buttons.forEach((b) => (b.disabled = false));
      refresh();
    }
  }

  document.addEventListener('submit', async (e) => {
    const f = e.target;
    if (f.matches('form.filters')) {
      // The filters in the URL, without the empty ones.
      e.preventDefault();
      const q = new URLSearchParams();
      for (const [k, v] of new FormData(f)) if (v) q.set(k, v);
      const s = q.toString();
      location.assign(f.getAttribute('action') + (s ? '?' + s : ''));
    } else if (f.matches('form.action')) {
      e.preventDefault();
      if (await ask(describe(f))) send(f, false);
    } else if (f.matches('form.ack')) {
      e.preventDefault();
      send(f, true);
    }
  });

  // A filter select applies at once.
  document.addEventListener('change', (e) => {
    const el = e.target;
    if (el.form && el.form.matches('form.filters') && el.tagName !== 'INPUT') el.form.requestSubmit();
    else if (el.form && el.form.matches('form.filters') && el.type === 'checkbox') el.form.requestSubmit();
  });

  // ---------------------------------------------------------------------
  // Keyboard

  let chord = false;
  function navigables() {
    return $$('#main a[data-nav], #main summary[data-nav], #graph .node').filter((el) => el.offsetParent !== null || el.closest('svg'));
  }
  function move(step) {
    const items = navigables();
    if (!items.length) return;
    let i = items.indexOf(document.activeElement);
    i = i < 0 ? (step > 0 ? 0 : items.length - 1) : Math.min(items.length - 1, Math.max(0, i + step));
    items[i].focus();
    items[i].scrollIntoView({ block: 'nearest', inline: 'nearest' });
  }
  document.addEventListener('keydown', (e) => {
    if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    if (t.closest && t.closest('input, select, textarea, [contenteditable]')) {
      if (e.key === 'Escape') t.blur();
      return;
    }
    if ($('dialog[open]')) return;
    if (chord) {
      chord = false;
      if (e.key === 'h') location.href = '/';
      else if (e.key === 'p') location.href = '/problems';
      return;
    }
    switch (e.key) {
      case '/':
        e.preventDefault();
        $('#filter-q').focus();
        break;
      case 'j':
      case 'ArrowDown':
        if (e.key === 'ArrowDown' && !(t.matches && t.matches('#graph .node'))) return;
        e.preventDefault();
        move(1);
        break;
      case 'k':
      case 'ArrowUp':
        if (e.key === 'ArrowUp' && !(t.matches && t.matches('#graph .node'))) return;
        e.preventDefault();
        move(-1);
        break;
      case 'g':
        chord = true;
        break;
      case '?':
        $('#help').showModal();
        break;
      case 'Enter':
      case ' ':
        if (t.matches && t.matches('#graph .node')) {
          e.preventDefault();
          location.href = t.getAttribute('href');
        }
        break;
    }
  });

  // ---------------------------------------------------------------------
  // The dependency graph: dagre lays it out, we draw it.

  let layoutCache = { key: '', layout: null };
  let measurer = null;

  function textWidth(text, bold) {
    if (!measurer) measurer = document.createElement('canvas').getContext('2d');
    measurer.font = (bold ? '600 ' : '') + '12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
    return measurer.measureText(text).width;
  }

  function clip(s, n) {
    return s.length > n ? s.slice(0, n - 1) + '…' : s;
  }

  function layoutOf(data) {
    const key = JSON.stringify([data.nodes.map((n) => [n.id, n.title]), data.edges.map((e) => [e.from, e.to])]);
    if (layoutCache.key === key) return layoutCache.layout;
    const g = new dagre.graphlib.Graph();
    g.setGraph({ rankdir: 'TB', nodesep: 16, ranksep: 44, edgesep: 8, marginx: 6, marginy: 6 });
    g.setDefaultEdgeLabel(() => ({}));
    for (const n of data.nodes) {
      const w = Math.max(textWidth(n.id, true), textWidth(clip(n.title, 34)), textWidth('● in progress · 10/10 tasks', true)) + 20;
      g.setNode(n.id, { width: Math.ceil(w), height: 58 });
    }
    for (const e of data.edges) g.setEdge(e.from, e.to);
    const t0 = performance.now();
    dagre.layout(g);
    dash.layoutMs = performance.now() - t0;
    const layout = { width: g.graph().width, height: g.graph().height, nodes: {}, edges: [] };
    for (const id of g.nodes()) layout.nodes[id] = g.node(id);
    for (const e of g.edges()) layout.edges.push({ from: e.v, to: e.w, points: g.edge(e).points });
    layoutCache = { key, layout };
    return layout;
  }

  function el(name, attrs, parent) {
    const x = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs || {})) x.setAttribute(k, v);
    if (parent) parent.appendChild(x);
    return x;
  }

  // set changes an attribute only when its value differs: an update in
  // place touches what changed.
  function set(x, name, value) {
    if (x.getAttribute(name) !== value) x.setAttribute(name, value);
  }

  function text(x, value) {
    if (x.textContent !== value) x.textContent = value;
  }

  function edgeClass(info) {
    return ['edge', info.critical ? 'critical' : '', info.cycle ? 'cycle' : ''].filter(Boolean).join(' ');
  }

  // paintNode writes what a node shows of its story onto its <a>: its
  // state, task counts, match and path.
  function paintNode(a, n) {
    set(a, 'class', ['node', 'st-' + n.state, n.critical ? 'critical' : '', n.match ? '' : 'unmatched'].filter(Boolean).join(' '));
    set(a, 'data-state', n.state);
    set(a, 'href', n.href);
    set(a, 'aria-label', `${n.id}: ${n.label}, ${n.done} of ${n.total} tasks${n.critical ? ', on the critical path' : ''}. ${n.title}`);
    const [st, , title, tip] = a.querySelectorAll('text, title');
    text(st, `${n.glyph} ${n.label} · ${n.done}/${n.total} tasks`);
    text(title, clip(n.title, 34));
    text(tip, `${n.id} · ${n.label}\n${n.title}`);
  }

  // drawGraph draws the epic's graph from #graph's data; while the layout
  // is the one drawn (the same stories and edges) the drawing is updated
  // in place: a run's progress repaints its nodes, not the SVG.
  function drawGraph() {
    const box = $('#graph');
    if (!box || !box.dataset.graph) return;
    if (!window.dagre) {
      box.textContent = 'The graph needs JavaScript; the table below lists the same stories.';
      return;
    }
    const drawnFrom = box.dataset.graph;
    if (box.firstElementChild && box.sagaDrawnFrom === drawnFrom) return; // a row changed, not the graph
    const data = JSON.parse(drawnFrom);
    if (!data.nodes.length) {
      box.textContent = 'The epic lists no story.';
      return;
    }
    const L = layoutOf(data);
    const byEdge = new Map(data.edges.map((e) => [e.from + '\u0000' + e.to, e]));
    const drawn = box.firstElementChild;
    if (drawn && drawn.sagaLayout === L) {
      // Only what changed is touched: a node's data as last painted is
      // kept on it, an edge's class on it.
      for (const n of data.nodes) {
        const a = drawn.sagaNodes.get(n.id);
        const painted = JSON.stringify(n);
        if (a && a.sagaPainted !== painted) {
          paintNode(a, n);
          a.sagaPainted = painted;
        }
      }
      for (const g of drawn.sagaEdges) {
        const c = edgeClass(byEdge.get(g.dataset.from + '\u0000' + g.dataset.to) || {});
        if (g.sagaClass !== c) set(g, 'class', (g.sagaClass = c));
      }
    } else {
      box.replaceChildren(drawSVG(L, data, byEdge));
    }
    box.sagaDrawnFrom = drawnFrom;
    dash.graphs++;
    dash.graphAt = performance.now();
  }

  function drawSVG(L, data, byEdge) {
    const svg = el('svg', { width: Math.ceil(L.width), height: Math.ceil(L.height), viewBox: `0 0 ${Math.ceil(L.width)} ${Math.ceil(L.height)}`, role: 'presentation' });
    svg.sagaLayout = L;
    svg.sagaNodes = new Map();
    svg.sagaEdges = [];
    const defs = el('defs', {}, svg);
    const marker = el('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 9, markerHeight: 9,
      markerUnits: 'userSpaceOnUse', orient: 'auto-start-reverse' }, defs);
    el('path', { d: 'M0,0 L10,5 L0,10 z' }, marker);
    const edges = el('g', { class: 'edges' }, svg);
    for (const e of L.edges) {
      const g = el('g', { class: edgeClass(byEdge.get(e.from + '\u0000' + e.to) || {}), 'data-from': e.from, 'data-to': e.to }, edges);
      g.sagaClass = g.getAttribute('class');
      svg.sagaEdges.push(g);
      const d = e.points.map((p, i) => (i ? 'L' : 'M') + p.x.toFixed(1) + ',' + p.y.toFixed(1)).join(' ');
      el('path', { d, 'marker-end': 'url(#arrow)' }, g);
    }
    const nodes = el('g', { class: 'nodes' }, svg);
    for (const n of data.nodes) {
      const p = L.nodes[n.id];
      if (!p) continue;
      const a = el('a', { tabindex: '0', 'data-id': n.id,
        transform: `translate(${(p.x - p.width / 2).toFixed(1)},${(p.y - p.height / 2).toFixed(1)})` }, nodes);
      el('rect', { width: p.width, height: p.height, rx: 6 }, a);
      el('text', { x: 10, y: 17, class: 'st' }, a);
      el('text', { x: 10, y: 33, class: 'id' }, a).textContent = n.id;
      el('text', { x: 10, y: 49, class: 'title' }, a);
      el('title', {}, a);
      paintNode(a, n);
      a.sagaPainted = JSON.stringify(n);
      svg.sagaNodes.set(n.id, a);
    }
    return svg;
  }

  // ---------------------------------------------------------------------

  function start() {
    sums = sumsOf(document);
    drawGraph();
    const out = $('#output pre');
    if (out) out.scrollTop = out.scrollHeight;
    connect();
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
