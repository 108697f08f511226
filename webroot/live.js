// Live task events over the SockJS event-bus bridge (/eventbus): the console redraws on each status change instead
// of polling. The token travels in every frame's headers; a tenant listens to its own address, the admin to all.
// When the bridge cannot be reached or closes, onDown is called and the console falls back to polling.
import { el } from './api.js';

const MAX_SHOWN = 20;
let bus = null;

/** Connects for {tenant, admin} with `token`: onUp() once live, onEvent(event) per status change, onDown() on failure. */
export function connect(token, me, onEvent, onUp, onDown) {
  disconnect();
  if (typeof window.EventBus !== 'function') { onDown(); return; }
  const eb = new window.EventBus('/eventbus');
  bus = eb;
  eb.enableReconnect(false);
  eb.defaultHeaders = { authorization: `Bearer ${token}` };
  const address = me.admin ? 'heteroflow.admin.task-events' : `heteroflow.tenant.${me.tenant}.task-events`;
  eb.onopen = () => {
    setState('live');
    onUp();
    eb.registerHandler(address, (err, message) => {
      if (err) return;
      show(message.body);
      onEvent(message.body);
    });
  };
  eb.onerror = () => {}; // a refused frame; the connection stays
  eb.onclose = () => { if (bus === eb) { bus = null; setState('polling'); onDown(); } };
}

export function disconnect() {
  const old = bus;
  bus = null;
  if (old) try { old.close(); } catch (e) { /* already closed */ }
  setState('polling');
}

export function live() {
  return bus !== null && bus.state === window.EventBus.OPEN;
}

function setState(state) {
  const marker = document.getElementById('live-state');
  if (marker) marker.textContent = state === 'live' ? 'live updates' : 'polling every 3 s';
}

/** The newest status changes, newest first (one line each: task, from → to, reason). */
function show(event) {
  const list = document.getElementById('task-events');
  if (!list) return;
  const reason = event.code || event.message ? ` (${[event.code, event.message].filter(Boolean).join(': ')})` : '';
  list.prepend(el('li', { 'data-task': event.task_id, 'data-status': event.to },
    `${event.name}: ${event.from ?? 'new'} → ${event.to}${reason}`));
  while (list.children.length > MAX_SHOWN) list.lastElementChild.remove();
}
