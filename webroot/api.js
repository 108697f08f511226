// The one place the SPA talks to the REST API: the token (this browser session only) and error display.
const TOKEN_KEY = 'heteroflow.token';

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(value) {
  sessionStorage.setItem(TOKEN_KEY, value);
  caller = null;
}

let caller = null;

/** Who the token is ({tenant, admin}), asked once per token: the page hides admin forms from tenant tokens. */
export function whoami() {
  if (!caller) caller = api('GET', '/api/v1/whoami').catch((e) => { caller = null; throw e; });
  return caller;
}

/** A time as "12 s ago", "3 min ago", "5 h ago", "2 d ago" (the exact time is in the element's title). */
export function ago(iso, now = Date.now()) {
  if (!iso) return 'never';
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86400)} d ago`;
}

/** A time to come as "now", "in 40 s", "in 5 min", "in 3 h", "in 2 d". */
export function until(iso, now = Date.now()) {
  const seconds = Math.round((Date.parse(iso) - now) / 1000);
  if (seconds <= 0) return 'now';
  if (seconds < 60) return `in ${seconds} s`;
  if (seconds < 3600) return `in ${Math.floor(seconds / 60)} min`;
  if (seconds < 86400) return `in ${Math.floor(seconds / 3600)} h`;
  return `in ${Math.floor(seconds / 86400)} d`;
}

/** An element showing a relative time, the exact one as its title. */
export function time(iso) {
  return el('time', { datetime: iso ?? undefined, title: iso ?? undefined }, ago(iso));
}

export function showError(message) {
  const box = document.getElementById('error');
  box.textContent = message;
  box.hidden = !message;
}

/** fetch with the bearer token; resolves to parsed JSON (or text), rejects with the API's own message. */
export async function api(method, path, body) {
  const headers = { Authorization: `Bearer ${token() ?? ''}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  const type = response.headers.get('content-type') ?? '';
  const data = type.includes('json') && text ? JSON.parse(text) : text;
  if (!response.ok) {
    const message = data && data.message ? data.message : `${response.status} ${response.statusText}`;
    throw new Error(`${method} ${path}: ${message}`);
  }
  return data;
}

export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (value !== undefined && value !== null && value !== false) node.setAttribute(key, value === true ? '' : value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) node.append(child instanceof Node ? child : String(child));
  }
  return node;
}
