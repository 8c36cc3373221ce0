// SPDX-License-Identifier: GPL-3.0-or-later
// svg_to_png.js: renders a taskspy SVG flame graph to a PNG with Debian's headless Chromium (through
// playwright-core from tests/browser/node_modules: `cd tests/browser && npm ci`), for the README's picture:
//   make demo && node docs/svg_to_png.js demo.svg docs/demo.png
'use strict';

const path = require('path');
const { chromium } = require(path.join(__dirname, '..', 'tests', 'browser', 'node_modules', 'playwright-core'));

async function main() {
  const [svgPath, pngPath] = process.argv.slice(2);
  if (!svgPath || !pngPath) {
    console.error('usage: node docs/svg_to_png.js GRAPH.svg OUT.png');
    process.exitCode = 2;
    return;
  }
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1200, height: 400 } });
    await page.goto(`file://${path.resolve(svgPath)}`);
    await page.waitForLoadState('load');
    await page.locator('svg').first().screenshot({ path: pngPath });
  } finally {
    await browser.close();
  }
}

main().catch((e) => {
  console.error(`svg_to_png.js: ${e.message.split('\n')[0]}`);
  process.exitCode = 1;
});
