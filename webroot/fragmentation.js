// Fragmentation at a glance: free cards per node, whole free nodes, the largest task that still fits.
import { api, el } from './api.js';

export async function render(view) {
  const f = await api('GET', '/api/v1/fragmentation');
  const counts = Object.entries(f.free_cards_per_node).map(([free, nodes]) => [Number(free), nodes]).sort((a, b) => a[0] - b[0]);
  const most = Math.max(1, ...counts.map(([, nodes]) => nodes));
  view.replaceChildren(
    el('h2', {}, 'Fragmentation'),
    el('p', {}, el('strong', { id: 'largest' }, f.largest_placeable_task), ' cards: the largest whole-card task that still fits on one node · ',
      el('strong', { id: 'whole-free' }, f.whole_free_nodes), ' entirely free nodes · ',
      `${f.free_cards} of ${f.total_cards} cards free`),
    el('table', { 'aria-label': 'Free cards per node' },
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Free cards'), el('th', { scope: 'col' }, 'Nodes'), el('th', { scope: 'col' }, ''))),
      el('tbody', {}, counts.map(([free, nodes]) => el('tr', {}, el('td', {}, free), el('td', {}, nodes),
        el('td', {}, el('div', { class: 'bar', style: `width:${Math.round(100 * nodes / most)}%` })))))));
}
