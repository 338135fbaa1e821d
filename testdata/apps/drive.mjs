// Drives Debian's Chromium, headless and kept off the network, through a host page of MCP
// Apps: opens the page, waits for the view to render and the steps to pass, takes a
// screenshot and prints what the page and the view showed as one JSON object.
//
// node drive.mjs '<json>' with: url, screenshot (a PNG path), and optionally
//   click: a CSS selector clicked in the view once it shows waitFor,
//   waitFor: a CSS selector the view must show first (default body *),
//   until: a JavaScript expression evaluated in the view, awaited until truthy (REPORT in
//     it stands for the host's window.report as JSON),
//   collect: a JavaScript expression evaluated in the view, whose value is printed,
//   timeoutMs: the bound of each wait (default 20000).
import { createRequire } from "node:module";

// playwright-core as make installs it under build/npm (TOOLNODE_NPM).
const { chromium } = createRequire(`${process.env.TOOLNODE_NPM}/`)("playwright-core");

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
const out = { console: [] };
try {
  const page = await browser.newPage({ viewport: { width: 900, height: 700 } });
  page.on("console", (m) => out.console.push(`${m.type()}: ${m.text()}`));
  page.on("pageerror", (e) => out.console.push(`pageerror: ${e.message}`));
  await page.goto(opts.url);
  const view = page.frameLocator("#sandbox").frameLocator("#view");
  await view.locator(opts.waitFor ?? "body *").first().waitFor({ timeout });
  if (opts.click) await view.locator(opts.click).first().click({ timeout });
  const frame = () => page.frames().find((f) => f.url() === "about:srcdoc");
  if (opts.until) {
    const deadline = Date.now() + timeout;
    // REPORT in the expression stands for the host's report as it is then.
    const until = async () => frame()?.evaluate(opts.until.replaceAll("REPORT", JSON.stringify(await page.evaluate(() => window.report))));
    while (!(await until().catch(() => false))) {
      if (Date.now() > deadline) throw new Error(`the view never met: ${opts.until}`);
      await page.waitForTimeout(100);
    }
  }
  if (opts.collect) out.collected = await frame().evaluate(opts.collect);
  await page.waitForFunction(() => window.report && (window.report.result || window.report.errors.length), null, { timeout });
  out.report = await page.evaluate(() => window.report);
  await page.screenshot({ path: opts.screenshot, fullPage: true });
} catch (e) {
  out.error = String(e?.stack ?? e);
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(out));
