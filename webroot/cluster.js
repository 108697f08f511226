// The cluster: nodes grouped by vendor and rack, each card free / whole-card / shard / offline; cordoned,
// draining, dedicated and offline nodes marked; admins get the location form and cordon / uncordon / drain.
import { api, el, showError, time } from './api.js';

export async function render(view, { admin } = { admin: false }) {
  const { items } = await api('GET', '/api/v1/nodes');
  const groups = new Map();
  for (const node of items) {
    const key = `${node.gpu_vendor ?? 'no GPU'} · rack ${node.location.rack ?? '—'}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(node);
  }
  const count = (test) => items.filter(test).length;
  const summary = [`${count((n) => n.status === 'offline')} offline`, `${count((n) => n.cordoned)} cordoned`,
    `${count((n) => n.draining)} draining`, `${count((n) => n.dedicated_tenant)} dedicated`];
  view.replaceChildren(
    el('h2', {}, `Cluster: ${items.length} nodes`, el('span', { class: 'note' }, ` · ${summary.join(' · ')}`)),
    el('p', { class: 'legend' }, ['free', 'whole-card', 'shard', 'offline'].map((state) =>
      el('span', {}, el('span', { class: 'card', 'data-state': state, style: 'display:inline-flex' }, ' '), ` ${state}`)),
      el('span', {}, el('span', { class: 'badge offline' }, 'offline'), el('span', { class: 'badge cordoned' }, 'cordoned'),
        el('span', { class: 'badge draining' }, 'draining'), el('span', { class: 'badge dedicated' }, 'dedicated'))),
    el('div', { class: 'groups' }, [...groups.entries()].sort().map(([name, nodes]) => el('section', { class: 'group', 'aria-label': name },
      el('h3', {}, name), el('div', { class: 'nodes' }, nodes.map((node) => nodeCard(node, view, admin)))))));
}

/** "4 × A100 (40 GB)", one entry per model. */
function models(cards) {
  const byModel = new Map();
  for (const card of cards) {
    const key = `${card.model ?? 'unknown'} (${Math.round(card.memory_total_mb / 1024)} GB)`;
    byModel.set(key, (byModel.get(key) ?? 0) + 1);
  }
  return [...byModel.entries()].map(([model, n]) => `${n} × ${model}`).join(', ') || 'no cards';
}

function nodeCard(node, view, admin) {
  const offline = node.status === 'offline';
  const loc = node.location;
  const badges = [
    el('span', { class: `badge status ${node.status}` }, node.status),
    node.cordoned ? el('span', { class: 'badge cordoned', title: 'nothing new is scheduled here' }, 'cordoned') : null,
    node.draining ? el('span', { class: 'badge draining', title: 'cordoned; its tasks are being stopped or left to finish' }, 'draining') : null,
    node.dedicated_tenant ? el('span', { class: 'badge dedicated', title: `set by ${node.dedicated_by}` },
      `dedicated: ${node.dedicated_tenant}`) : null];
  return el('article', { class: 'node', 'data-node': node.id, 'data-status': node.status,
    'data-cordoned': String(node.cordoned), 'data-draining': String(node.draining), 'data-dedicated': node.dedicated_tenant ?? '' },
  el('h4', {}, node.id, ' ', badges),
  el('div', { class: 'note models' }, models(node.cards)),
  el('div', { class: 'note' }, `${node.gpu_used}/${node.gpu_total} cards used · CPU ${Math.round(node.cpu_percent)} % · `,
    `${[loc.region, loc.zone, loc.rack].filter(Boolean).join(' / ') || 'no location'} · heartbeat `, time(node.last_heartbeat_at)),
  el('div', { class: 'cards', role: 'list', 'aria-label': `Cards of ${node.id}` }, node.cards.map((card) =>
    el('span', { class: 'card', role: 'listitem', 'data-index': card.index, 'data-state': offline ? 'offline' : card.state,
      title: `card ${card.index}: ${card.model}, ${offline ? 'offline' : card.state}` }, card.index))),
  el('div', { class: 'note' }, Object.entries(node.labels).map(([k, v]) => `${k}=${v}`).join(', ') || 'no labels'),
  admin ? adminControls(node, view) : null);
}

/** The admin's controls of one node: cordon / uncordon / drain, and its location. */
function adminControls(node, view) {
  const act = async (method, path, body) => {
    try {
      await api(method, `/api/v1/nodes/${encodeURIComponent(node.id)}${path}`, body);
      showError('');
      await render(view, { admin: true });
    } catch (e) {
      showError(e.message);
    }
  };
  const button = (label, path, confirmText) => el('button', { type: 'button', 'data-action': path.slice(1),
    'aria-label': `${label} ${node.id}`,
    onclick: () => (!confirmText || window.confirm(confirmText)) && act('POST', path) }, label);
  const actions = el('div', { class: 'node-actions' },
    node.cordoned ? button('Uncordon', '/uncordon') : button('Cordon', '/cordon'),
    node.draining ? null : button('Drain', '/drain', `Drain ${node.id}: cordon it and stop the tasks running there?`));
  const field = (name) => el('span', {}, el('label', { for: `${name}-${node.id}`, class: 'note' }, `${name} `),
    el('input', { id: `${name}-${node.id}`, name, value: node.location[name] ?? '' }));
  const form = el('form', { class: 'location-form', 'aria-label': `Location of ${node.id}`,
    onsubmit: (event) => {
      event.preventDefault();
      act('PUT', '/location', Object.fromEntries(['region', 'zone', 'rack']
        .map((name) => [name, event.target.elements[name].value.trim()]).filter(([, value]) => value)));
    } }, field('region'), field('zone'), field('rack'), el('button', { type: 'submit' }, 'Save location'));
  return el('div', { class: 'admin' }, actions, el('details', {}, el('summary', { class: 'note' }, 'Location'), form));
}
