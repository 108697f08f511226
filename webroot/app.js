// HeteroFlow's operator console: plain ES modules, no build step, no external resources.
import { setToken, showError, token, whoami } from './api.js';
import * as plugins from './plugins.js';
import * as cluster from './cluster.js';
import * as queue from './queue.js';
import * as services from './services.js';
import * as fragmentation from './fragmentation.js';

const VIEWS = { plugins, cluster, queue, services, fragmentation };
const REFRESH_MS = 3000;
let timer;

async function show() {
  const name = (location.hash || '#plugins').slice(1);
  const module = VIEWS[name] ?? plugins;
  document.querySelectorAll('nav a').forEach((a) => a.setAttribute('aria-current', a.dataset.view === name ? 'page' : 'false'));
  clearInterval(timer);
  if (!token()) return;
  const view = document.getElementById('view');
  let admin = false;
  try {
    const me = await whoami();
    admin = me.admin;
    document.body.dataset.admin = String(admin);
    document.getElementById('token-state').textContent = admin ? 'admin' : `tenant ${me.tenant}`;
  } catch (e) {
    showError(e.message);
    return;
  }
  const draw = () => module.render(view, { admin }).catch((e) => showError(e.message));
  await draw();
  if (name === 'cluster' || name === 'queue' || name === 'services') timer = setInterval(() => {
    if (!view.contains(document.activeElement) || document.activeElement === view) draw();
  }, REFRESH_MS);
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
