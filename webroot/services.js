// Inference services: each service's status (Degraded marked, with its reason), replicas running / desired and
// pending, rebuilds, its schedule window (open or closed, whether the window owns the count, the next edge) and its
// autoscale bounds; a service's slots and events on demand.
import { api, el, showError, time, until } from './api.js';

/** A time to come as the browser's local time, "in 3 h" after it; the exact instant as its title. */
const at = (iso) => iso
  ? el('time', { datetime: iso, title: iso }, `${new Date(iso).toLocaleString()} (${until(iso)})`)
  : '—';

const windowCell = (s) => {
  if (!s.window) return '—';
  const w = s.window;
  return el('span', {}, el('span', { class: `badge window ${w.state}`, 'data-window': w.state }, w.state),
    w.owns_replicas ? el('span', { class: 'badge owns', title: `the window's action (${w.action}) owns the replica count` },
      `${w.action} owns count`) : null,
    ' next edge ', at(w.next_edge_at));
};

const autoscale = (s) => s.autoscale
  ? `${s.autoscale.min}–${s.autoscale.max} at ${s.autoscale.target_gpu_utilization_percent}% GPU`
  : '—';

const replicas = (s) => `${s.replicas.running} / ${s.replicas.desired}`
  + (s.replicas.pending ? ` (${s.replicas.pending} pending)` : '');

export async function render(view) {
  const groups = await api('GET', '/api/v1/groups?limit=1000');
  const services = groups.items.filter((g) => g.kind === 'service')
    .sort((a, b) => (a.status === 'Stopped') - (b.status === 'Stopped') || a.name.localeCompare(b.name));
  const count = (status) => services.filter((s) => s.status === status).length;
  const detail = el('section', { id: 'service-detail', 'aria-live': 'polite' });
  const columns = [
    ['Service', (s) => el('button', { type: 'button', onclick: () => show(s.id, detail) }, s.name)],
    ['Tenant', (s) => s.tenant],
    ['Status', (s) => el('span', { class: `badge service-status ${s.status.toLowerCase()}` }, s.status)],
    ['Replicas running / desired', replicas],
    ['Rebuilds', (s) => s.rebuilds],
    ['Window', windowCell],
    ['Autoscale', autoscale],
    ['Queue', (s) => s.queue ?? '—'],
    ['Reason', (s) => s.reason ? s.reason.message : '—']];
  view.replaceChildren(
    el('h2', {}, `Services: ${services.length}`, el('span', { class: 'note' },
      ` · ${['Running', 'Degraded', 'Paused', 'Stopped'].map((status) => `${count(status)} ${status.toLowerCase()}`)
        .join(' · ')}`)),
    el('table', { 'aria-label': 'Services' },
      el('thead', {}, el('tr', {}, columns.map(([title]) => el('th', { scope: 'col' }, title)))),
      el('tbody', {}, services.map((s) => el('tr', {
        'data-service': s.id, 'data-status': s.status, class: s.status === 'Degraded' ? 'degraded' : undefined,
        'data-window': s.window ? s.window.state : undefined,
      }, columns.map(([, value]) => el('td', {}, value(s))))))),
    services.length ? null : el('p', { class: 'note' }, 'No inference services.'),
    detail);
}

async function show(id, detail) {
  try {
    const [service, events] = await Promise.all([api('GET', `/api/v1/groups/${id}`),
      api('GET', `/api/v1/groups/${id}/events?limit=50`)]);
    detail.replaceChildren(el('h3', {}, `${service.name} (${service.status})`),
      el('table', { 'aria-label': 'Replica slots' },
        el('thead', {}, el('tr', {}, ['Slot', 'Generation', 'Status', 'Node', 'Port', 'Cards', 'Failures in a row',
          'Next try', 'Reason'].map((title) => el('th', { scope: 'col' }, title)))),
        el('tbody', {}, service.slots.map((slot) => el('tr', { 'data-slot': slot.slot },
          el('td', {}, slot.slot), el('td', {}, slot.generation), el('td', {}, slot.status ?? '—'),
          el('td', {}, slot.node ?? '—'), el('td', {}, slot.host_port ?? '—'), el('td', {}, slot.gpus.join(',') || '—'),
          el('td', {}, slot.failures_in_a_row), el('td', {}, at(slot.next_try_at)),
          el('td', {}, slot.reason ? `${slot.reason.code}: ${slot.reason.message}` : '—'))))),
      el('h4', {}, 'Events'),
      el('ol', { 'aria-label': 'Service events' }, events.items.map((e) => el('li', {}, time(e.at), ` ${e.kind}: ${e.message ?? ''}`))));
    showError('');
  } catch (e) {
    showError(e.message);
  }
}
