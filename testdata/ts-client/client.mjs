// Drives toolnode with the official TypeScript MCP client: lists the tools, calls one, and
// prints what it saw as JSON on stdout for the Go test that started it.
//
//   node client.mjs http URL TOOL ARGS_JSON
//   node client.mjs stdio TOOL ARGS_JSON COMMAND [ARG...]
import { createRequire } from "node:module";
import path from "node:path";

// The SDK is installed under build/npm by the Makefile, not next to this file.
const require = createRequire(path.resolve(process.env.TOOLNODE_NPM ?? "build/npm", "package.json"));
const sdk = (p) => import(require.resolve(`@modelcontextprotocol/sdk/${p}`));
const { Client } = await sdk("client/index.js");

const [mode, ...rest] = process.argv.slice(2);
let transport, tool, args;
if (mode === "http") {
  const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
  [, tool, args] = rest;
  transport = new StreamableHTTPClientTransport(new URL(rest[0]));
} else {
  const { StdioClientTransport } = await sdk("client/stdio.js");
  const [t, a, command, ...cmdArgs] = rest;
  [tool, args] = [t, a];
  // The whole environment: the node under test is told how to run by a variable.
  transport = new StdioClientTransport({ command, args: cmdArgs, env: process.env, stderr: "inherit" });
}
const client = new Client({ name: "toolnode-ts-test", version: "1.0.0" });
await client.connect(transport);
const tools = [];
let cursor;
do {
  const page = await client.listTools(cursor ? { cursor } : {});
  tools.push(...page.tools.map((t) => t.name));
  cursor = page.nextCursor;
} while (cursor);
const result = await client.callTool({ name: tool, arguments: JSON.parse(args) });
console.log(JSON.stringify({ server: client.getServerVersion(), tools, result }));
await client.close();
