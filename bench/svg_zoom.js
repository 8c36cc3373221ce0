// SPDX-License-Identifier: GPL-3.0-or-later
// svg_zoom.js: `make bench` row 6: how long Debian's headless Chromium takes to load a large taskspy SVG
// flame graph, zoom into its widest depth-3 frame and reset the zoom, style and layout included (what a
// user waits for). The behaviour itself is tested by tests/browser/svg_check.js; this only times it.
// Uses playwright-core from tests/browser/node_modules (bench.py installs it with npm ci when missing).
//
// usage: node svg_zoom.js GRAPH.svg RUNS   prints one JSON line: {frames, load_ms[], zoom_ms[], unzoom_ms[]}
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require(path.join(__dirname, '..', 'tests', 'browser', 'node_modules', 'playwright-core'));

const [svgPath, runsText] = process.argv.slice(2);
const runs = Math.max(1, Number(runsText) || 5);
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

async function timeOnce(context) {
  const page = await context.newPage();
  const started = Date.now();
  await page.goto(`file://${path.resolve(svgPath)}`);
  await page.waitForLoadState('load');
  const loadMs = Date.now() - started;
  const t = await page.evaluate(async () => {
    const frames = Array.from(document.getElementById('frames').children);
    const target = frames.filter((g) => g.getAttribute('data-d') === '3')
      .sort((a, b) => Number(b.getAttribute('data-n')) - Number(a.getAttribute('data-n')))[0];
    const settle = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
    const t0 = performance.now();
    target.querySelector('rect').dispatchEvent(new MouseEvent('click', { bubbles: true }));
    document.documentElement.getBoundingClientRect();
    await settle();
    const t1 = performance.now();
    document.getElementById('unzoom').dispatchEvent(new MouseEvent('click', { bubbles: true }));
    document.documentElement.getBoundingClientRect();
    await settle();
    const t2 = performance.now();
    return { frames: frames.length, zoom: t1 - t0, unzoom: t2 - t1 };
  });
  await page.close();
  return { loadMs, ...t };
}

async function main() {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'taskspy-bench-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 1000 },
    timeout: 60000,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  const out = { frames: 0, load_ms: [], zoom_ms: [], unzoom_ms: [] };
  try {
    for (let r = 0; r < runs; r++) {
      const t = await timeOnce(context);
      out.frames = t.frames;
      out.load_ms.push(t.loadMs);
      out.zoom_ms.push(t.zoom);
      out.unzoom_ms.push(t.unzoom);
    }
  } finally {
    await context.close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  }
  console.log(JSON.stringify(out));
}

main().catch((e) => {
  console.error(`svg_zoom.js: ${e.message.split('\n')[0]}`);
  process.exitCode = 1;
});
