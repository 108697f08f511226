// HeteroFlow's operator console: plain ES modules, no build step, no external resources.
import { setToken, showError, token, whoami } from './api.js';
import * as plugins from './plugins.js';
import * as cluster from './cluster.js';
import * as queue from './queue.js';
import * as services from './services.js';
import * as fragmentation from './fragmentation.js';
import * as live from './live.js';

const VIEWS = { plugins, cluster, queue, services, fragmentation };
const REFRESH_MS = 3000;
let timer;
let redraw = null; // the current view's redraw, when it refreshes
let liveFor = null; // the token the bridge is connected with
let pending;

/** Polling, the fallback while the event-bus bridge is not live. */
function poll(view) {
  clearInterval(timer);
  timer = setInterval(() => {
    if (redraw && (!view.contains(document.activeElement) || document.activeElement === view)) redraw();
  }, REFRESH_MS);
}

/** A task status change arrived: redraw once the burst is over (at most every 300 ms). */
function onTaskEvent() {
  if (!redraw || pending) return;
  pending = setTimeout(() => { pending = null; if (redraw) redraw(); }, 300);
}

async function show() {
  const name = (location.hash || '#plugins').slice(1);
  const module = VIEWS[name] ?? plugins;
  document.querySelectorAll('nav a').forEach((a) => a.setAttribute('aria-current', a.dataset.view === name ? 'page' : 'false'));
  clearInterval(timer);
  redraw = null;
  if (!token()) return;
  const view = document.getElementById('view');
  let admin = false;
  let me;
  try {
    me = await whoami();
    admin = me.admin;
    document.body.dataset.admin = String(admin);
    document.getElementById('token-state').textContent = admin ? 'admin' : `tenant ${me.tenant}`;
  } catch (e) {
    showError(e.message);
    return;
  }
  const draw = () => module.render(view, { admin }).catch((e) => showError(e.message));
  await draw();
  if (liveFor !== token()) {
    liveFor = token();
    live.connect(liveFor, me, onTaskEvent, () => clearInterval(timer),
      () => { liveFor = null; if (redraw) poll(view); });
  }
  if (name === 'cluster' || name === 'queue' || name === 'services') {
    redraw = draw;
    if (!live.live()) poll(view);
  }
}

document.getElementById('token-form').addEventListener('submit', (event) => {
  event.preventDefault();
  setToken(document.getElementById('token').value.trim());
  document.getElementById('token').value = '';
  document.getElementById('token-state').textContent = 'token set for this session';
  showError('');
  show();
});
window.addEventListener('hashchange', show);
if (token()) document.getElementById('token-state').textContent = 'token set for this session';
show();
