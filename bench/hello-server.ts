/**
 * The baseline of the decision-path benchmark: a bare Koa app in a process of its own, with no
 * middleware, answering `{"hello":"world"}` to any request. Whatever the service does beyond
 * this is what the service costs; the machine's own speed divides out of the ratio. Tells its
 * port to the parent over IPC.
 */
import type { AddressInfo } from 'node:net';
import Koa from 'koa';

const app = new Koa();
app.use((ctx) => {
  ctx.body = { hello: 'world' };
});
const server = app.listen(0, '127.0.0.1', () => {
  process.send!({ port: (server.address() as AddressInfo).port });
});
process.on('disconnect', () => server.close(() => process.exit(0)));
