// A web host of MCP Apps, written with the official SDKs as a host embeds them: an MCP
// client (@modelcontextprotocol/client) connected to toolnode over Streamable HTTP, and the
// SDK's host-side bridge (AppBridge) that hands the view the tool's input and result and
// forwards the view's own calls to the node. The view runs in a sandbox proxy of another
// origin (sandbox.html), as the extension asks of web hosts.
//
// Query: node (the node's MCP URL), sandbox (the proxy's URL), tool and args (the call
// that opens the view). What happened is kept in window.report for the driver.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { AppBridge, PostMessageTransport, getToolUiResourceUri } from "@modelcontextprotocol/ext-apps/app-bridge";

const q = new URLSearchParams(location.search);
const report = (window.report = { viewCalls: [], errors: [] });
const log = (m) => {
  const p = document.createElement("pre");
  p.textContent = m;
  document.getElementById("log").appendChild(p);
};

async function main() {
  const client = new Client(
    { name: "toolnode-apps-host", version: "1.0.0" },
    { capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(q.get("node"))));
  const { tools } = await client.listTools();
  report.tools = tools.map((t) => t.name);
  const tool = tools.find((t) => t.name === q.get("tool"));
  if (!tool) throw new Error(`tool ${q.get("tool")} is not listed`);
  report.tool = tool;
  const uri = getToolUiResourceUri(tool);
  const read = await client.readResource({ uri });
  const view = read.contents[0];
  report.resource = { requested: uri, uri: view.uri, mimeType: view.mimeType, meta: view._meta ?? null, bytes: view.text.length };
  log(`view ${uri} (${view.text.length} bytes) for ${tool.name}`);

  const frame = document.createElement("iframe");
  frame.id = "sandbox";
  frame.style.cssText = "width: 100%; height: 560px; border: 1px solid #888";
  const proxyReady = new Promise((resolve) => {
    window.addEventListener("message", function ready(e) {
      if (e.source === frame.contentWindow && e.data?.method === "ui/notifications/sandbox-proxy-ready") {
        window.removeEventListener("message", ready);
        resolve();
      }
    });
  });
  frame.src = q.get("sandbox");
  document.getElementById("views").appendChild(frame);
  await proxyReady;

  const bridge = new AppBridge(client, { name: "toolnode-apps-host", version: "1.0.0" }, { serverTools: {}, serverResources: {}, logging: {} });
  const args = JSON.parse(q.get("args") || "{}");
  bridge.oninitialized = async () => {
    report.initialized = true;
    await bridge.sendToolInput({ arguments: args });
    const result = await client.callTool({ name: tool.name, arguments: args });
    report.result = result;
    await bridge.sendToolResult(result);
    log(`result sent: ${JSON.stringify(result).slice(0, 200)}`);
  };
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  // Record the view's own calls on their way to the node.
  const forward = bridge.oncalltool;
  bridge.oncalltool = async (params, extra) => {
    const entry = { name: params.name };
    report.viewCalls.push(entry);
    try {
      entry.result = await forward(params, extra);
    } catch (e) {
      entry.error = String(e?.message ?? e);
      throw e;
    }
    return entry.result;
  };
  await bridge.sendSandboxResourceReady({ html: view.text, csp: view._meta?.ui?.csp, permissions: view._meta?.ui?.permissions });
}

main().catch((e) => {
  report.errors.push(String(e?.stack ?? e));
  log(`error: ${e}`);
});
