// The one place the SPA talks to the REST API: the token (this browser session only) and error display.
const TOKEN_KEY = 'heteroflow.token';

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(value) {
  sessionStorage.setItem(TOKEN_KEY, value);
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
