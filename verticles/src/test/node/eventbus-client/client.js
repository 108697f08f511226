// Drives HeteroFlow's SockJS event-bus bridge with the real third-party client (@vertx/eventbus-bridge-client.js).
// Usage: node client.js <base-url> <tenant-token> <tenant-name> <other-tenant-name>
// Prints one JSON line with what it saw; EventBusClientTest asserts on it.
'use strict';
const EventBus = require('@vertx/eventbus-bridge-client.js');

const [base, token, tenant, other] = process.argv.slice(2);
const url = base + '/eventbus';
const result = { events: [], errors: [] };

function open(authorization) {
  return new Promise((resolve, reject) => {
    const eb = new EventBus(url);
    eb.enableReconnect(false);
    eb.defaultHeaders = authorization ? { authorization } : null;
    eb.onerror = (err) => result.errors.push({ bus: authorization === 'Bearer ' + token ? 'good' : 'bad', err });
    eb.onopen = () => resolve(eb);
    setTimeout(() => reject(new Error('the bridge did not open')), 10000);
  });
}

function send(eb, address, body) {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ timeout: true }), 5000);
    eb.send(address, body, {}, (err, reply) => {
      clearTimeout(timer);
      resolve(err ? { error: err } : { status: reply.headers && reply.headers.status, body: reply.body });
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

(async () => {
  const eb = await open('Bearer ' + token);
  eb.registerHandler('heteroflow.tenant.' + tenant + '.task-events', (err, msg) => {
    if (!err) result.events.push(msg.body);
  });
  eb.registerHandler('heteroflow.tenant.' + other + '.task-events', (err, msg) => {
    result.events.push({ leaked: true, body: msg && msg.body });
  });
  await sleep(500);
  result.invalid = await send(eb, 'heteroflow.api.tasks.submit', { name: 'bad', command: ['true'], gpu_required: -1 });
  result.submit = await send(eb, 'heteroflow.api.tasks.submit',
    { name: 'bus-task', command: ['sh', '-c', 'sleep 1'], gpu_required: 1, gpu_type: 'nvidia' });
  const id = result.submit.body && result.submit.body.id;
  result.stopOther = await send(eb, 'heteroflow.api.tasks.stop', { id: '00000000-0000-0000-0000-000000000000' });

  const bad = await open('Bearer not-a-token');
  result.badToken = await send(bad, 'heteroflow.api.tasks.submit', { name: 'x', command: ['true'] });
  const none = await open(null);
  result.noToken = await send(none, 'heteroflow.api.tasks.submit', { name: 'x', command: ['true'] });

  const deadline = Date.now() + 40000;
  const final = ['succeeded', 'failed', 'stopped'];
  while (Date.now() < deadline && !result.events.some((e) => e.task_id === id && final.includes(e.to))) {
    await sleep(100);
  }
  await sleep(1000); // anything duplicated or leaked arrives too
  console.log(JSON.stringify(result));
  process.exit(0);
})().catch((e) => {
  console.log(JSON.stringify({ fatal: String(e), ...result }));
  process.exit(1);
});
