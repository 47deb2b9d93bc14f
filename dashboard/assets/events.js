// SAGA dashboard: the one event stream of a browser, shared by its tabs
// (a SharedWorker started by app.js). It opens GET /events while a tab is
// connected and closes it when the last one says goodbye (pagehide);
// every tab gets each message, and a tab that joins gets the current
// sequence at once, as a stream of its own would have sent it.
'use strict';
const ports = new Set();
let es = null;
let live = false;
let seq = 0;

function broadcast(msg) {
  for (const p of ports) p.postMessage(msg);
}

function open() {
  if (es) return;
  es = new EventSource('/events');
  es.addEventListener('hello', (e) => {
    seq = JSON.parse(e.data).seq;
    live = true;
    broadcast({ type: 'hello', seq });
  });
  es.addEventListener('change', (e) => {
    const notice = JSON.parse(e.data);
    seq = notice.seq;
    broadcast({ type: 'change', notice });
  });
  es.onerror = () => {
    live = false;
    broadcast({ type: 'offline' });
  };
}

function close() {
  if (es) es.close();
  es = null;
  live = false;
}

self.onconnect = (e) => {
  const port = e.ports[0];
  ports.add(port);
  port.onmessage = (m) => {
    if (m.data !== 'bye') return;
    ports.delete(port);
    port.close();
    if (ports.size === 0) close();
  };
  port.start();
  open();
  if (live) port.postMessage({ type: 'hello', seq });
};
