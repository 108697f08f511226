// Plugin management: every change goes through the REST API, then the page re-reads the effective set.
import { api, el, showError } from './api.js';

const EXCLUSIVE = ['spread', 'binpack'];

export async function render(view, { admin } = { admin: false }) {
  const { plugins } = await api('GET', '/api/v1/scheduler/plugins');
  const rows = plugins.map((plugin) => (admin ? row(plugin, view) : readOnlyRow(plugin)));
  view.replaceChildren(
    el('h2', {}, 'Scheduler plugins'),
    el('p', { class: 'note' }, 'What this page shows is what the scheduler uses: every change is stored and re-read. ',
      'spread and binpack exclude each other: switching one on switches the other off. ',
      'The filters marked always on run first, in the order listed; a pending task\'s reason names the first that refused.',
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
  const settings = el('span', {}, (plugin.settings || []).map((setting) => settingControl(plugin, setting, change)));
  return el('tr', { 'data-plugin': plugin.name, 'data-enabled': String(plugin.enabled) },
    el('th', { scope: 'row' }, plugin.name), el('td', {}, plugin.kind), el('td', {}, state), el('td', {}, weight),
    el('td', {}, settings));
}

/** One control per setting the plugin declares (GET /api/v1/scheduler/plugins lists the schema): no plugin is special. */
function settingControl(plugin, setting, change) {
  const id = `setting-${plugin.name}-${setting.name}`;
  const value = plugin.extra[setting.name];
  const put = (given) => change('PUT', `/api/v1/plugins/${plugin.name}`, { [setting.name]: given });
  let control;
  if (setting.type === 'enum') {
    control = el('select', { id, 'aria-label': setting.name, onchange: (event) => put(event.target.value) },
      setting.choices.map((choice) => el('option', { value: choice, selected: value === choice }, choice)));
  } else if (setting.type === 'bool') {
    control = el('input', { id, type: 'checkbox', 'aria-label': setting.name, checked: value === true,
      onchange: (event) => put(event.target.checked) });
  } else {
    control = el('span', {},
      el('input', { id, type: 'number', min: setting.min, max: setting.max, step: setting.type === 'int' ? 1 : 'any',
        value, size: 6 }), ' ',
      el('button', { type: 'button', 'aria-label': `Save ${setting.name} of ${plugin.name}`,
        onclick: () => put(Number(document.getElementById(id).value)) }, 'Save'));
  }
  return el('div', { title: setting.description }, el('label', { for: id, class: 'note' }, `${setting.name} `), control);
}
