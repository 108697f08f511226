// The queue: the queues' use against their quotas, task groups, pending tasks by priority with their reason,
// nomination and expected start, counts by reason, tasks being preempted, running tasks, one task's detail.
import { api, el, showError, time, until } from './api.js';

/** When a waiting task or group is expected to start (estimated_start_at), or why that cannot be known. */
const eta = (w) => w.estimated_start_at
  ? el('time', { datetime: w.estimated_start_at, title: w.estimated_start_at }, until(w.estimated_start_at))
  : (w.estimate_note ?? '—');
const etaMark = (w) => w.estimated_start_at ? 'estimated' : w.estimate_note ? 'note' : 'none';

export async function render(view) {
  const [pending, running, preempting, queues, groups] = await Promise.all([
    api('GET', '/api/v1/tasks?status=pending&limit=1000'), api('GET', '/api/v1/tasks?status=running&limit=1000'),
    api('GET', '/api/v1/tasks?status=preempting&limit=1000'), api('GET', '/api/v1/queues'),
    api('GET', '/api/v1/groups?limit=100')]);
  // gangs only: inference services have their own view (services.js)
  const unfinished = groups.items.filter((g) => g.kind !== 'service' && !['succeeded', 'failed', 'stopped'].includes(g.status));
  const queue = pending.items.sort((a, b) => b.priority - a.priority || a.created_at.localeCompare(b.created_at));
  const byReason = new Map();
  for (const task of queue) {
    const code = task.reason ? task.reason.code : 'not yet tried';
    byReason.set(code, (byReason.get(code) ?? 0) + 1);
  }
  const detail = el('section', { id: 'task-detail', 'aria-live': 'polite' });
  const table = (label, tasks, columns, marks = () => ({})) => el('table', { 'aria-label': label },
    el('thead', {}, el('tr', {}, columns.map(([title]) => el('th', { scope: 'col' }, title)))),
    el('tbody', {}, tasks.map((task) => el('tr', { 'data-task': task.id, ...marks(task) }, columns.map(([, value], i) => el('td', {},
      i === 0 ? el('button', { type: 'button', onclick: () => show(task.id, detail) }, value(task)) : value(task)))))));
  const plain = (label, rows, columns, attributes) => el('table', { 'aria-label': label },
    el('thead', {}, el('tr', {}, columns.map(([title]) => el('th', { scope: 'col' }, title)))),
    el('tbody', {}, rows.map((row) => el('tr', attributes(row), columns.map(([, value]) => el('td', {}, value(row)))))));
  const gpuEq = (n) => n.toFixed(1);
  view.replaceChildren(
    el('h2', {}, `Queue: ${queue.length} pending, ${preempting.items.length} preempting, ${running.items.length} running`),
    el('h3', {}, 'Queues'),
    plain('Queues', queues.items, [['Queue', (q) => q.parent ? `${q.parent}/${q.name}` : q.name],
      ['Used GPU-eq', (q) => gpuEq(q.usage.gpu_eq)], ['Guaranteed', (q) => gpuEq(q.guaranteed)],
      ['Max', (q) => q.max === null ? '—' : gpuEq(q.max)], ['Above guarantee', (q) => gpuEq(q.usage.borrowed_gpu_eq)],
      ['Training borrowed', (q) => gpuEq(q.borrowed)], ['Lent', (q) => gpuEq(q.lent)],
      ['Active', (q) => q.usage.active_tasks], ['Running', (q) => q.usage.running_tasks],
      ['Pending', (q) => q.usage.pending_tasks]],
    (q) => ({ 'data-queue': q.name })),
    el('h3', {}, 'Task groups'),
    plain('Task groups', unfinished, [['Group', (g) => g.name], ['Status', (g) => g.status], ['Members', (g) => g.member_count],
      ['Queue', (g) => g.queue], ['Master', (g) => g.master ? `${g.master.addr}:${g.master.port} (${g.backend})` : '—'],
      ['Reason', (g) => g.reason ? `${g.reason.code}: ${g.reason.message}` : '—'],
      ['Expected start', (g) => g.status === 'pending' ? eta(g) : '—']],
    (g) => ({ 'data-group': g.id, 'data-status': g.status })),
    el('h3', {}, 'Pending tasks'),
    el('p', {}, [...byReason.entries()].map(([code, count]) => el('span', { class: 'badge' }, `${code}: ${count}`)), ' '),
    table('Pending tasks', queue, [['Task', (t) => t.name], ['Priority', (t) => t.priority], ['Tenant', (t) => t.tenant],
      ['Queue', (t) => t.queue], ['Waiting since', (t) => time(t.created_at)],
      ['Reason', (t) => t.reason ? `${t.reason.code}: ${t.reason.message}` : '—'],
      ['Expected start', eta],
      ['Nominated', (t) => t.nominated_node ? `${t.nominated_node} (held until ${time(t.nominated_until)})` : '—']],
    (t) => ({ 'data-eta': etaMark(t), ...(t.nominated_node ? { 'data-nominated': t.nominated_node } : {}) })),
    el('h3', {}, 'Being preempted'),
    table('Preempting tasks', preempting.items, [['Task', (t) => t.name], ['Node', (t) => t.node],
      ['Preempting since', (t) => time(t.preempting_since)], ['Why', (t) => t.reason ? t.reason.message : '—']],
    () => ({ 'data-state': 'preempting', class: 'preempting' })),
    el('h3', {}, 'Running'),
    table('Running tasks', running.items, [['Task', (t) => t.name], ['Node', (t) => t.node],
      ['Cards', (t) => t.shard ? `shard of ${t.shard.card_index}` : t.gpus.join(',')], ['Started', (t) => time(t.started_at)]]),
    detail);
}

async function show(id, detail) {
  try {
    const [task, events, logs] = await Promise.all([api('GET', `/api/v1/tasks/${id}`),
      api('GET', `/api/v1/tasks/${id}/events`), api('GET', `/api/v1/tasks/${id}/logs`)]);
    detail.replaceChildren(el('h3', {}, `${task.name} (${task.status})`),
      el('ol', {}, events.map((e) => el('li', {}, time(e.at), ` ${e.from ?? ''} → ${e.to ?? e.kind} ${e.code ?? ''} ${e.message ?? ''}`))),
      el('pre', { 'aria-label': 'Logs' }, logs || '(no output)'));
    showError('');
  } catch (e) {
    showError(e.message);
  }
}
