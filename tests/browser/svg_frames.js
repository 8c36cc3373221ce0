// SPDX-License-Identifier: GPL-3.0-or-later
// svg_frames.js: what the browser checks of taskspy's SVGs share: opening an SVG in a new page of a started
// Chromium (its script errors collected), every frame read back (its data-s, data-n and data-d, its name
// from the tooltip, its rectangle's place and fill, class and label), a fill's channels, and a tolerance
// for comparing pixel positions.
'use strict';

const path = require('path');

// A new page of browser (chromium_tap's launchChromium) showing the SVG file, loaded; errors collects the
// page's script errors as they come.
async function openSvg(browser, svgPath) {
  const page = await browser.context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`file://${path.resolve(svgPath)}`);
  await page.waitForLoadState('load');
  return { page, errors };
}

// The frames of the page's graph, in document order (preorder). A frame's name is its tooltip up to
// " (N " where N is its data-n, or up to the last " (" where the tooltip shows the count otherwise (wait
// time in milliseconds). The page hands them over as one JSON string: playwright's own serialization of
// 60,000 objects took 20-40 s a read (svg_browser.t's 100,000-stack graph), one string well under one.
async function frameInfo(page) {
  return JSON.parse(await page.evaluate(() =>
    JSON.stringify(Array.from(document.getElementById('frames').children).map((g, i) => {
      const title = g.querySelector('title').textContent;
      const rect = g.querySelector('rect');
      const n = g.getAttribute('data-n');
      let at = title.lastIndexOf(` (${n} `);
      if (at < 0) at = title.lastIndexOf(' (');
      return {
        i, s: Number(g.getAttribute('data-s')), n: Number(n), d: Number(g.getAttribute('data-d')),
        name: at >= 0 ? title.substring(0, at) : title, title,
        x: Number(rect.getAttribute('x')), w: Number(rect.getAttribute('width')), fill: rect.getAttribute('fill'),
        cls: g.getAttribute('class') || '', label: g.querySelector('text') ? g.querySelector('text').textContent : '',
      };
    }))));
}

// [r, g, b] of a "#rrggbb" fill
const rgbOf = (fill) => [1, 3, 5].map((k) => parseInt(fill.substring(k, k + 2), 16));
const near = (a, b, eps) => Math.abs(a - b) <= eps;

module.exports = { openSvg, frameInfo, rgbOf, near };
