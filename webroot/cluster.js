// The cluster: nodes grouped by vendor and rack, each card free / whole-card / shard / offline.
import { api, el, showError } from './api.js';

export async function render(view) {
  const { items } = await api('GET', '/api/v1/nodes');
  const groups = new Map();
  for (const node of items) {
    const key = `${node.gpu_vendor ?? 'no GPU'} · rack ${node.location.rack ?? '—'}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(node);
  }
  view.replaceChildren(
    el('h2', {}, `Cluster: ${items.length} nodes`),
    el('p', { class: 'legend' }, ['free', 'whole-card', 'shard', 'offline'].map((state) =>
      el('span', {}, el('span', { class: 'card', 'data-state': state, style: 'display:inline-flex' }, ' '), ` ${state}`))),
    ...[...groups.entries()].sort().map(([name, nodes]) => el('section', { class: 'group', 'aria-label': name },
      el('h3', {}, name), el('div', { class: 'nodes' }, nodes.map((node) => nodeCard(node, view))))));
}

function nodeCard(node, view) {
  const offline = node.status === 'offline';
  const loc = node.location;
  const field = (name) => el('span', {}, el('label', { for: `${name}-${node.id}`, class: 'note' }, `${name} `),
    el('input', { id: `${name}-${node.id}`, name, value: loc[name] ?? '' }));
  const form = el('form', { class: 'location-form', 'aria-label': `Location of ${node.id}`,
    onsubmit: async (event) => {
      event.preventDefault();
      const data = Object.fromEntries(['region', 'zone', 'rack']
        .map((name) => [name, event.target.elements[name].value.trim()]).filter(([, value]) => value));
      try {
        await api('PUT', `/api/v1/nodes/${encodeURIComponent(node.id)}/location`, data);
        showError('');
        await render(view);
      } catch (e) {
        showError(e.message);
      }
    } }, field('region'), field('zone'), field('rack'), el('button', { type: 'submit' }, 'Save location'));
  return el('article', { class: 'node', 'data-node': node.id, 'data-status': node.status },
    el('h4', {}, node.id, ' ', el('span', { class: 'badge' }, node.status)),
    el('div', { class: 'note' }, `${node.gpu_used}/${node.gpu_total} cards used · CPU ${Math.round(node.cpu_percent)} % · `,
      `${[loc.region, loc.zone, loc.rack].filter(Boolean).join(' / ') || 'no location'}`),
    el('div', { class: 'cards', role: 'list', 'aria-label': `Cards of ${node.id}` }, node.cards.map((card) =>
      el('span', { class: 'card', role: 'listitem', 'data-index': card.index, 'data-state': offline ? 'offline' : card.state,
        title: `card ${card.index}: ${card.model}, ${offline ? 'offline' : card.state}` }, card.index))),
    el('div', { class: 'note' }, Object.entries(node.labels).map(([k, v]) => `${k}=${v}`).join(', ') || 'no labels'),
    form);
}
