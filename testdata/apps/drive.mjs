// Drives Debian's Chromium, headless and kept off the network, through the host page of
// MCP Apps (host.html): bundles the page's script with esbuild, serves the page on one
// loopback origin and the sandbox proxy on another, opens the view of a tool, runs the
// steps, takes a screenshot and prints what the page and the view showed as one JSON
// object.
//
// node drive.mjs '<json>' with: node (the node's MCP URL), tool and args (the call that
// opens the view), screenshot (a PNG path), and optionally
//   click: a CSS selector clicked in the view once it shows waitFor,
//   waitFor: a CSS selector the view must show first (default body *),
//   until: a JavaScript expression evaluated in the view, awaited until truthy (REPORT in
//     it stands for the host's window.report as JSON),
//   collect: a JavaScript expression evaluated in the view, whose value is printed,
//   timeoutMs: the bound of each wait (default 20000).
// The packages come from build/npm, named by TOOLNODE_NPM.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import path from "node:path";

const npm = process.env.TOOLNODE_NPM;
const require = createRequire(`${npm}/`);
const { chromium } = require("playwright-core");
const esbuild = require("esbuild");
const here = path.dirname(new URL(import.meta.url).pathname);

const opts = JSON.parse(process.argv[2]);
const timeout = opts.timeoutMs ?? 20000;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--disable-domain-reliability", "--no-pings",
  ],
});
const bundled = await esbuild.build({
  entryPoints: [path.join(here, "host.js")], bundle: true, format: "esm", platform: "browser",
  write: false, nodePaths: [path.join(npm, "node_modules")], logLevel: "warning",
});
const files = {
  "/host.html": ["text/html", readFileSync(path.join(here, "host.html"))],
  "/sandbox.html": ["text/html", readFileSync(path.join(here, "sandbox.html"))],
  "/host.bundle.js": ["text/javascript", bundled.outputFiles[0].contents],
};
const www = createServer((req, res) => {
  const f = files[new URL(req.url, "http://x").pathname];
  res.writeHead(f ? 200 : 404, { "content-type": f ? f[0] : "text/plain" });
  res.end(f ? f[1] : "not found");
});
await new Promise((resolve) => www.listen(0, "127.0.0.1", resolve));
const port = www.address().port;
// Two origins of one server: the host on 127.0.0.1, the sandbox proxy on localhost.
const url = `http://127.0.0.1:${port}/host.html?` + new URLSearchParams({
  node: opts.node, sandbox: `http://localhost:${port}/sandbox.html`, tool: opts.tool, args: JSON.stringify(opts.args ?? {}),
});
const out = { console: [] };
try {
  const page = await browser.newPage({ viewport: { width: 900, height: 700 } });
  page.on("console", (m) => out.console.push(`${m.type()}: ${m.text()}`));
  page.on("pageerror", (e) => out.console.push(`pageerror: ${e.message}`));
  await page.goto(url);
  const view = page.frameLocator("#sandbox").frameLocator("#view");
  await view.locator(opts.waitFor ?? "body *").first().waitFor({ timeout });
  if (opts.click) await view.locator(opts.click).first().click({ timeout });
  const frame = () => page.frames().find((f) => f.url() === "about:srcdoc");
  if (opts.until) {
    const deadline = Date.now() + timeout;
    // REPORT in the expression stands for the host's report as it is then.
    const until = async () => frame()?.evaluate(opts.until.replaceAll("REPORT", `(${JSON.stringify(await page.evaluate(() => window.report))})`));
    let why = "";
    while (!(await until().catch((e) => ((why = String(e)), false)))) {
      if (Date.now() > deadline) throw new Error(`the view never met: ${opts.until} ${why}`);
      await page.waitForTimeout(100);
    }
  }
  if (opts.collect) out.collected = await frame().evaluate(opts.collect);
  await page.waitForFunction(() => window.report && (window.report.result || window.report.errors.length), null, { timeout });
  out.report = await page.evaluate(() => window.report);
  await page.screenshot({ path: opts.screenshot, fullPage: true });
} catch (e) {
  out.error = String(e?.stack ?? e);
  out.report = await browser.contexts()[0]?.pages()[0]?.evaluate(() => window.report).catch(() => undefined);
} finally {
  await browser.close();
  www.close();
}
process.stdout.write(JSON.stringify(out));
