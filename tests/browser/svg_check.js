// SPDX-License-Identifier: GPL-3.0-or-later
// svg_check.js: drives Debian's headless Chromium (through playwright-core) over taskspy SVG flame graphs
// and prints TAP: the graph loads without script errors, hover fills the details line, a click zooms (the
// frame spans the chart, ancestors dimmed, the rest hidden), Reset Zoom restores, Ctrl-F / Search buttons
// search and "Matched: x%" equals the share computed from the folded counts (also zoomed and with the case
// toggle), the view survives a reload through the URL hash, names round-trip through the escaping (trailing
// flamegraph.pl annotations stripped), the controls stay whole in a 1200-pixel window, and a 100,000-stack
// graph zooms and unzooms. Fails (never skips) when Chromium cannot start.
//
// usage: node svg_check.js GRAPH.svg GRAPH.folded REGEX HOSTILE.svg HOSTILE.folded BIG.svg SCREENSHOT.png
'use strict';

const fs = require('fs');
const path = require('path');
const { ok, finish, launchChromium } = require('./chromium_tap');
const { frameInfo, near } = require('./svg_frames');

const [svgPath, foldedPath, regexText, hostileSvg, hostileFolded, bigSvg, screenshotPath] = process.argv.slice(2);
const HIGHLIGHT = 'rgb(230,0,230)';

// flamegraph.pl's rule: a trailing "_[k]", "_[j]", "_[i]" or "_[w]" colours a frame and is not shown.
const shownName = (name) => name.replace(/_\[[kjiw]\]$/, '');

// Stacks of a folded file, frame names as the graph shows them.
function readFolded(file) {
  const stacks = [];
  for (const raw of fs.readFileSync(file, 'utf8').split('\n')) {
    const line = raw.replace(/\s+$/, '');
    const space = line.lastIndexOf(' ');
    if (space <= 0) continue;
    const count = Number(line.substring(space + 1));
    if (!Number.isInteger(count)) continue;
    stacks.push({ frames: line.substring(0, space).split(';').map(shownName), count });
  }
  return stacks;
}

// Share (percent) of the samples under prefix (root-first frame names) whose stack has a frame matching re.
function expectedPercent(stacks, re, prefix) {
  let all = 0;
  let matched = 0;
  for (const s of stacks) {
    if (prefix.some((name, i) => s.frames[i] !== name)) continue;
    all += s.count;
    if (s.frames.some((f) => re.test(f))) matched += s.count;
  }
  return all ? (100 * matched) / all : 0;
}

async function svgNumbers(page) {
  return page.evaluate(() => ({
    xpad: Number(document.documentElement.getAttribute('data-xpad')),
    chart: Number(document.documentElement.getAttribute('data-chart')),
  }));
}

async function matchedPercent(page) {
  const text = await page.textContent('#matched');
  const m = /Matched: ([0-9.]+)%/.exec(text || '');
  return m ? Number(m[1]) : NaN;
}

async function clickFrame(page, index) {
  const box = await page.locator(`#frames > g:nth-child(${index + 1}) > rect`).boundingBox();
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
}

async function searchWithCtrlF(page, term) {
  page.once('dialog', (dialog) => dialog.accept(term));
  await page.keyboard.press('Control+f');
  await page.waitForFunction(() => /Matched|Invalid/.test(document.getElementById('matched').textContent));
}

// Ancestors (depth 1..) and the frame itself, root first: the folded prefix of a zoomed frame.
function pathOf(frames, target) {
  const chain = frames.filter((f) => f.d > 0 && f.d <= target.d && f.s <= target.s && f.s + f.n >= target.s + target.n);
  return chain.sort((a, b) => a.d - b.d).map((f) => f.name);
}


async function checkGraph(context) {
  const stacks = readFolded(foldedPath);
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`file://${path.resolve(svgPath)}`);
  await page.waitForLoadState('load');
  const { xpad, chart } = await svgNumbers(page);
  const initial = await frameInfo(page);
  const root = initial.find((f) => f.d === 0);
  ok(initial.length > 10 && root && near(root.w, chart, 0.01), `graph loads with ${initial.length} frames`);

  // hover: the details line shows name, samples and percent
  const hovered = initial.find((f) => f.d === 1);
  await page.locator(`#frames > g:nth-child(${hovered.i + 1}) > rect`).hover();
  const details = await page.textContent('#details');
  ok(details === `Function: ${hovered.title}` && /^.+ \(\d+ samples, \d+\.\d\d%\)$/.test(hovered.title),
    'hover shows "NAME (N samples, P%)" in the details line', details);

  // click to zoom into the widest depth-2 frame that is not already full width
  const target = initial.filter((f) => f.d === 2 && f.w < chart * 0.9).sort((a, b) => b.w - a.w)[0];
  await clickFrame(page, target.i);
  const zoomed = await frameInfo(page);
  const z = zoomed[target.i];
  ok(near(z.x, xpad, 0.01) && near(z.w, chart, 0.01), `clicked frame "${target.name}" spans the full width`,
    `x=${z.x} w=${z.w}`);
  const ancestors = zoomed.filter((f) => f.d < target.d && f.s <= target.s && f.s + f.n >= target.s + target.n);
  ok(ancestors.length === target.d && ancestors.every((f) => f.cls === 'dim' && near(f.w, chart, 0.01)),
    'ancestors stay visible, full width, dimmed');
  const inside = zoomed.filter((f) => f.d >= target.d && f.s >= target.s && f.s + f.n <= target.s + target.n);
  const scale = chart / target.n;
  ok(inside.length > 1 && inside.every((f) => f.cls === '' &&
    near(f.x, xpad + (f.s - target.s) * scale, 0.011) && near(f.w, f.n * scale, 0.011)),
  `${inside.length} frames of the zoomed subtree are rescaled`);
  const outside = zoomed.filter((f) => !inside.includes(f) && !ancestors.includes(f));
  ok(outside.length > 0 && outside.every((f) => f.cls === 'hide'), `${outside.length} other frames hidden`);
  const charWidth = await page.evaluate(() => Number(document.documentElement.getAttribute('data-charw')));
  ok(inside.every((f) => f.label.length <= Math.max(0, Math.floor((f.w - 3) / charWidth)) &&
    (f.label === f.name || f.label === '' || (f.label.endsWith('..') && f.name.startsWith(f.label.slice(0, -2))))),
  'labels are re-fitted to the zoomed widths');
  const unzoomVisible = await page.evaluate(() => !/hide/.test(document.getElementById('unzoom').getAttribute('class')));
  ok(unzoomVisible && page.url().includes(`zoom=${target.s}:${target.d}`), 'Reset Zoom shown, zoom in the URL',
    page.url());

  await page.click('#unzoom');
  const reset = await frameInfo(page);
  ok(reset.every((f, k) => f.cls === '' && near(f.x, initial[k].x, 0.011) && near(f.w, initial[k].w, 0.011)),
    'Reset Zoom restores every frame');

  // search with Ctrl-F
  const re = new RegExp(regexText);
  const want = expectedPercent(stacks, re, []);
  await searchWithCtrlF(page, regexText);
  const got = await matchedPercent(page);
  ok(near(got, want, 0.006) && want > 0 && want < 100, `Ctrl-F /${regexText}/: Matched ${got}% (folded: ${want.toFixed(4)}%)`);
  const highlighted = await frameInfo(page);
  const shouldMatch = highlighted.filter((f) => f.d > 0 && re.test(f.name));
  ok(shouldMatch.length > 0 && highlighted.every((f) => (f.fill === HIGHLIGHT) === shouldMatch.includes(f)),
    `exactly the ${shouldMatch.length} matching frames are highlighted`);

  // case toggle and the Search button: the upper-cased expression matches the same with "ic"
  await page.click('#search');                       // active search: the button resets it
  ok((await page.textContent('#matched')).trim() === '' &&
    (await frameInfo(page)).every((f) => f.fill !== HIGHLIGHT), 'Search button resets an active search');
  await page.click('#ignorecase');
  page.once('dialog', (dialog) => dialog.accept(regexText.toUpperCase()));
  await page.click('#search');
  await page.waitForFunction(() => /Matched/.test(document.getElementById('matched').textContent));
  const wantIc = expectedPercent(stacks, new RegExp(regexText.toUpperCase(), 'i'), []);
  const gotIc = await matchedPercent(page);
  ok(near(gotIc, wantIc, 0.006), `case-insensitive /${regexText.toUpperCase()}/i: ${gotIc}% (folded: ${wantIc.toFixed(4)}%)`);

  // zoomed search: share of the zoomed frame's samples
  await clickFrame(page, target.i);
  const prefix = pathOf(await frameInfo(page), target);
  const wantZoomed = expectedPercent(stacks, new RegExp(regexText.toUpperCase(), 'i'), prefix);
  const gotZoomed = await matchedPercent(page);
  ok(near(gotZoomed, wantZoomed, 0.006), `zoomed search: ${gotZoomed}% of "${prefix.join(';')}" (folded: ${wantZoomed.toFixed(4)}%)`);

  // the URL carries the view: a new page opens zoomed and searched
  const url = page.url();
  await page.screenshot({ path: screenshotPath });
  const shared = await context.newPage();
  shared.on('pageerror', (e) => errors.push(e.message));
  await shared.goto(url);
  await shared.waitForLoadState('load');
  const sharedFrames = await frameInfo(shared);
  const sharedPercent = await matchedPercent(shared);
  ok(near(sharedFrames[target.i].w, chart, 0.01) && near(sharedPercent, gotZoomed, 1e-9) &&
    /active/.test(await shared.getAttribute('#ignorecase', 'class')), 'a shared URL restores zoom, search and case', url);
  await shared.close();
  ok(fs.existsSync(screenshotPath) && fs.statSync(screenshotPath).size > 1000, `screenshot written to ${screenshotPath}`);

  // invalid expressions do not break the page
  await page.click('#search');
  await searchWithCtrlF(page, '([unclosed');
  ok(/Invalid/.test(await page.textContent('#matched')), 'an invalid expression is reported on the page');
  ok(errors.length === 0, 'no script errors', errors.join('; '));
  await page.close();
}

async function checkHostile(context) {
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`file://${path.resolve(hostileSvg)}`);
  await page.waitForLoadState('load');
  const shown = new Set((await frameInfo(page)).filter((f) => f.d > 0).map((f) => f.name));
  const names = new Set();
  for (const s of readFolded(hostileFolded)) s.frames.forEach((f) => names.add(f));
  const missing = [...names].filter((n) => !shown.has(n));
  ok(missing.length === 0 && shown.size === names.size && errors.length === 0,
    `all ${names.size} hostile names shown exactly as written (annotations stripped)`, missing.slice(0, 3).join(' | '));
  await page.close();
}

// A 1200-pixel-wide window with a vertical scrollbar (the graph is taller than the window) is narrower than
// the 1200-pixel image: the image is scaled to fit, so the top-right controls are whole and clickable and
// nothing scrolls sideways, also with a search active ("Reset Search", "Matched: ..."); a wider window
// shows the image at its own size.
async function checkNarrowWindow(context) {
  const page = await context.newPage();
  await page.setViewportSize({ width: 1200, height: 200 });
  await page.goto(`file://${path.resolve(svgPath)}#search=${encodeURIComponent(regexText)}`);
  await page.waitForLoadState('load');
  await page.waitForFunction(() => /Matched/.test(document.getElementById('matched').textContent));
  const view = await page.evaluate(() => {
    const root = document.documentElement;
    const box = (id) => {
      const r = document.getElementById(id).getBoundingClientRect();
      return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, text: document.getElementById(id).textContent };
    };
    const ic = box('ignorecase');
    const hit = document.elementFromPoint((ic.left + ic.right) / 2, (ic.top + ic.bottom) / 2);
    return {
      visible: root.clientWidth, window: window.innerWidth, scrollWidth: document.scrollingElement.scrollWidth,
      search: box('search'), ic, matched: box('matched'), title: box('title'), icHit: hit && hit.id,
    };
  });
  ok(view.visible < view.window, `the window shows a vertical scrollbar (${view.window} px window, ${view.visible} px visible)`);
  const inside = (b) => b.left >= 0 && b.right <= view.visible;
  ok(['search', 'ic', 'matched', 'title'].every((k) => inside(view[k])) && view.search.text === 'Reset Search' &&
    /Matched/.test(view.matched.text),
  'the controls ("Reset Search", "ic", "Matched: ...") lie inside the visible width',
  JSON.stringify(view));
  ok(view.search.right <= view.ic.left, '"Reset Search" and "ic" do not overlap', JSON.stringify(view));
  ok(view.scrollWidth <= view.visible, `nothing scrolls sideways (content ${view.scrollWidth} px)`);
  ok(view.icHit === 'ignorecase', `"ic" is what its centre hits (${view.icHit})`);
  await page.click('#ignorecase');
  ok(/active/.test(await page.getAttribute('#ignorecase', 'class')), 'clicking "ic" toggles it');
  await page.setViewportSize({ width: 1600, height: 1000 });
  await page.waitForFunction(() => document.documentElement.getAttribute('width') === '1200');
  const wide = await page.evaluate(() => document.documentElement.getBoundingClientRect().width);
  ok(Math.abs(wide - 1200) < 0.5, `a wider window shows the image at its own 1200 px (${wide})`);
  await page.close();
}

async function checkBig(context) {
  // (how fast it zooms is measured by make bench, bench/svg_zoom.js: no wall-clock assertion here)
  const page = await context.newPage();
  await page.goto(`file://${path.resolve(bigSvg)}`);
  await page.waitForLoadState('load');
  const { xpad, chart } = await svgNumbers(page);
  const initial = await frameInfo(page);
  const target = initial.filter((f) => f.d === 3).sort((a, b) => b.n - a.n)[0];
  const click = (index) => page.evaluate((i) => {
    const el = i < 0 ? document.getElementById('unzoom')
      : document.getElementById('frames').children[i].querySelector('rect');
    el.dispatchEvent(new MouseEvent('click', { bubbles: true }));
  }, index);
  await click(target.i);
  const zoomed = await frameInfo(page);
  await click(-1);
  const reset = await frameInfo(page);
  ok(initial.length > 1000 && near(zoomed[target.i].x, xpad, 0.01) && near(zoomed[target.i].w, chart, 0.01) &&
    reset.every((f, k) => f.cls === '' && near(f.w, initial[k].w, 0.011)),
  `100,000-stack graph (${initial.length} frames) zooms and unzooms`);
  await page.close();
}

async function main() {
  const browser = await launchChromium({
    viewport: { width: 1280, height: 1000 },
    ignoreDefaultArgs: ['--hide-scrollbars'],   // scrollbars take room, as in a user's window
    args: ['--disable-gpu'],
  });
  if (!browser) {
    finish();
    return;
  }
  for (const step of [checkGraph, checkHostile, checkNarrowWindow, checkBig]) {
    try {
      await step(browser.context);
    } catch (e) {
      ok(false, `${step.name} ran to the end`, e.stack);
    }
  }
  await browser.close();
  finish();
}

main().catch((e) => {
  ok(false, 'browser checks ran', e.stack);
  finish();
});
