import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/**
 * A small MCP server to put behind the gateway: three tools of a code host, made with the official
 * MCP SDK and served over Streamable HTTP. The end-to-end test runs it, and so can you
 * (`node --import tsx examples/mcp-gateway/demo-server.ts`, on 127.0.0.1:3000 or `MCP_DEMO_PORT`).
 */

/** The server, and what reached it. */
export interface DemoServer {
  /** Its MCP endpoint. */
  url: string;
  /** The tools it ran, in order. */
  calls: string[];
  /** The JSON-RPC methods it received (requests and notifications), in order. */
  methods: string[];
  close(): Promise<void>;
}

/** Its tools: a harmless one, and two a person would not hand to just any agent. */
function toolsFor(calls: string[]): McpServer {
  const server = new McpServer({ name: 'repo-tools', version: '1.0.0' });
  const ran = (name: string, text: string) => {
    calls.push(name);
    return { content: [{ type: 'text' as const, text }] };
  };
  server.registerTool(
    'search',
    { description: 'Searches the code', inputSchema: { query: z.string() } },
    ({ query }) => ran('search', `3 results for ${query}`),
  );
  server.registerTool(
    'delete_repo',
    { description: 'Deletes a repository', inputSchema: { repo: z.string() } },
    ({ repo }) => ran('delete_repo', `deleted ${repo}`),
  );
  server.registerTool(
    'send_email',
    { description: 'Sends an email', inputSchema: { to: z.string(), body: z.string() } },
    ({ to }) => ran('send_email', `sent to ${to}`),
  );
  server.registerResource(
    'readme',
    'docs://readme',
    { description: 'What the repository is', mimeType: 'text/plain' },
    (uri) => ({ contents: [{ uri: uri.href, text: 'repo-tools' }] }),
  );
  return server;
}

async function jsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
  return chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/**
 * Starts the server on 127.0.0.1 (any free port by default), stateful as most MCP servers are:
 * `initialize` opens a session, and every later request names it.
 */
export async function startDemoServer(options: { port?: number } = {}): Promise<DemoServer> {
  const calls: string[] = [];
  const methods: string[] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer((req, res) => {
    void (async () => {
      const body = req.method === 'POST' ? await jsonBody(req) : undefined;
      for (const message of Array.isArray(body) ? body : [body]) {
        const method = (message as { method?: unknown } | undefined)?.method;
        if (typeof method === 'string') methods.push(method);
      }
      const id = req.headers['mcp-session-id'];
      let transport = typeof id === 'string' ? sessions.get(id) : undefined;
      if (!transport) {
        if (typeof id === 'string' || !isInitializeRequest(body)) {
          res.writeHead(typeof id === 'string' ? 404 : 400).end();
          return;
        }
        const opened = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sessionId) => void sessions.set(sessionId, opened),
        });
        opened.onclose = () => {
          if (opened.sessionId !== undefined) sessions.delete(opened.sessionId);
        };
        await toolsFor(calls).connect(opened);
        transport = opened;
      }
      await transport.handleRequest(req, res, body);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  http.listen(options.port ?? 0, '127.0.0.1');
  await once(http, 'listening');
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    methods,
    close: async () => {
      await Promise.all([...sessions.values()].map((t) => t.close()));
      const closed = once(http, 'close');
      http.close();
      http.closeAllConnections();
      await closed;
    },
  };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const server = await startDemoServer({ port: Number(process.env['MCP_DEMO_PORT'] || 3000) });
  process.stdout.write(`demo MCP server listening on ${server.url}\n`);
}
