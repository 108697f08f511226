// Plugin management: every change goes through the REST API, then the page re-reads the effective set.
import { api, el, showError } from './api.js';

const EXCLUSIVE = ['spread', 'binpack'];

export async function render(view, { admin } = { admin: false }) {
  const { plugins } = await api('GET', '/api/v1/scheduler/plugins');
  const rows = plugins.map((plugin) => (admin ? row(plugin, view) : readOnlyRow(plugin)));
  view.replaceChildren(
    el('h2', {}, 'Scheduler plugins'),
    el('p', { class: 'note' }, 'What this page shows is what the scheduler uses: every change is stored and re-read. ',
      'spread and binpack exclude each other: switching one on switches the other off.',
      admin ? '' : ' Only the admin token can change plugins.'),
    el('table', { 'aria-label': 'Scheduler plugins', id: 'plugins' },
      el('thead', {}, el('tr', {}, ['Plugin', 'Kind', 'State', 'Weight', 'Settings'].map((h) => el('th', { scope: 'col' }, h)))),
      el('tbody', {}, rows)));
}

/** A tenant's view: the plugin set as the scheduler uses it, without the switches (the API would refuse them). */
function readOnlyRow(plugin) {
  const state = el('span', { class: plugin.enabled ? 'badge on' : 'badge' }, plugin.locked ? 'always on' : plugin.enabled ? 'on' : 'off');
  return el('tr', { 'data-plugin': plugin.name, 'data-enabled': String(plugin.enabled) },
    el('th', { scope: 'row' }, plugin.name), el('td', {}, plugin.kind), el('td', {}, state),
    el('td', {}, plugin.locked || plugin.kind === 'config' ? '—' : plugin.weight),
    el('td', { class: 'note' }, Object.keys(plugin.extra).length ? JSON.stringify(plugin.extra) : ''));
}

function row(plugin, view) {
  const reload = () => render(view, { admin: true }).catch((e) => showError(e.message));
  const change = (method, path, body) => api(method, path, body).then(() => showError('')).catch((e) => showError(e.message)).then(reload);
  const state = plugin.locked
    ? el('span', {}, el('span', { class: 'badge locked' }, 'always on'), ' ',
        el('button', { type: 'button', 'data-action': 'disable', 'aria-label': `Disable ${plugin.name}`,
          onclick: () => change('POST', `/api/v1/plugins/${plugin.name}?action=disable`) }, 'Disable'),
        el('div', { class: 'note' }, 'A correctness filter: nothing can switch it off.'))
    : el('span', {}, el('span', { class: plugin.enabled ? 'badge on' : 'badge' }, plugin.enabled ? 'on' : 'off'), ' ',
        el('button', { type: 'button', 'data-action': plugin.enabled ? 'disable' : 'enable',
          'aria-label': `${plugin.enabled ? 'Disable' : 'Enable'} ${plugin.name}`,
          onclick: () => change('POST', `/api/v1/plugins/${plugin.name}?action=${plugin.enabled ? 'disable' : 'enable'}`) },
          plugin.enabled ? 'Disable' : 'Enable'),
        EXCLUSIVE.includes(plugin.name) ? el('div', { class: 'note' }, `excludes ${EXCLUSIVE.find((n) => n !== plugin.name)}`) : null);
  const weightId = `weight-${plugin.name}`;
  const weight = plugin.locked || plugin.kind === 'config' ? el('span', { class: 'note' }, '—')
    : el('span', {}, el('label', { for: weightId, class: 'note' }, 'weight '),
        el('input', { id: weightId, type: 'number', min: 0, max: 100, value: plugin.weight, size: 4 }), ' ',
        el('button', { type: 'button', 'aria-label': `Save weight of ${plugin.name}`,
          onclick: () => change('PUT', `/api/v1/plugins/${plugin.name}`, { weight: Number(document.getElementById(weightId).value) }) },
          'Save'));
  let settings = el('span', { class: 'note' }, Object.keys(plugin.extra).length ? JSON.stringify(plugin.extra) : '');
  if (plugin.name === 'preempt') {
    const select = el('select', { id: 'preempt-stage', 'aria-label': 'preempt_stage',
      onchange: (event) => change('PUT', '/api/v1/plugins/preempt', { preempt_stage: event.target.value }) },
    ['disabled', 'scheduled', 'running'].map((stage) =>
      el('option', { value: stage, selected: plugin.extra.preempt_stage === stage }, stage)));
    settings = el('span', {}, el('label', { for: 'preempt-stage', class: 'note' }, 'preempt_stage '), select);
  }
  return el('tr', { 'data-plugin': plugin.name, 'data-enabled': String(plugin.enabled) },
    el('th', { scope: 'row' }, plugin.name), el('td', {}, plugin.kind), el('td', {}, state), el('td', {}, weight),
    el('td', {}, settings));
}
