// SPDX-License-Identifier: GPL-3.0-or-later
// diff_svg_check.js: a differential SVG (taskspy diff -o FILE.svg) in Debian's headless Chromium (through
// playwright-core) against the folded diff of the same inputs (taskspy diff -o FILE.folded, difffolded.pl's
// lines), printing TAP: it loads without script errors; every frame's tooltip is "NAME (A samples, P%;
// before B, after A; D%)" with B and A the samples of the stacks through the frame in each column (its path
// read from the graph: the enclosing frames one depth up) and D the change of the stacks ending in it as a
// share of AFTER's total; each frame is red where those grew, blue where they shrank and white where they
// did not change, its strength flamegraph.pl's (the other channels int(210 x (max - |change|) / max), max the
// largest change of a stack); the hover details line shows both counts; a click zooms a frame to the chart's
// width; a search highlights and "Matched" gives the matching frames' share of AFTER, and resetting it gives
// the frames their differential colours back. Fails (never skips) when Chromium cannot start.
//
// usage: node diff_svg_check.js DIFF.svg DIFF.folded SCREENSHOT.png
'use strict';

const fs = require('fs');
const { ok, finish, launchChromium } = require('./chromium_tap');
const { openSvg, frameInfo, rgbOf, near } = require('./svg_frames');

const [svgPath, foldedPath, screenshotPath] = process.argv.slice(2);
const HIGHLIGHT = 'rgb(230,0,230)';

// difffolded.pl's lines: per stack text its counts before and after; the largest |after - before|
function readDiff(file) {
  const stacks = new Map();
  let maxChange = 1;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^(.*) (\d+) (\d+)$/.exec(line);
    if (!m) continue;
    const before = Number(m[2]), after = Number(m[3]);
    stacks.set(m[1], { before, after });
    maxChange = Math.max(maxChange, Math.abs(after - before));
  }
  return { stacks, maxChange };
}


// flamegraph.pl's color_scale
function expectedFill(change, max) {
  const other = Math.floor((210 * (max - Math.abs(change))) / max);
  const hex = (v) => v.toString(16).padStart(2, '0');
  if (change > 0) return `#ff${hex(other)}${hex(other)}`;
  if (change < 0) return `#${hex(other)}${hex(other)}ff`;
  return '#ffffff';
}

async function main() {
  const { stacks, maxChange } = readDiff(foldedPath);
  const browser = await launchChromium({ viewport: { width: 1300, height: 1000 } });
  if (!browser)
    return;
  const { page, errors } = await openSvg(browser, svgPath);
  const frames = await frameInfo(page);
  ok(frames.length > 100 && stacks.size > 100, `graph loads with ${frames.length} frames (${stacks.size} stacks in the diff)`);

  // each frame's path from the graph: frames come in preorder, so the path is the last frame of each depth
  const pathOf = [];
  const names = [];
  for (const f of frames) {
    names[f.d] = f.name;
    names.length = f.d + 1;
    pathOf[f.i] = names.slice(1).join(';');
  }
  // sums over the diff's stacks: through each path (both columns) and ending at it (the change)
  const through = new Map(), own = new Map();
  let afterTotal = 0, beforeTotal = 0;
  for (const [stack, c] of stacks) {
    afterTotal += c.after;
    beforeTotal += c.before;
    own.set(stack, c.after - c.before);
    const parts = stack.split(';');
    for (let k = 1; k <= parts.length; k++) {
      const key = parts.slice(0, k).join(';');
      const t = through.get(key) || { before: 0, after: 0 };
      t.before += c.before;
      t.after += c.after;
      through.set(key, t);
    }
  }
  const titleRe = /^(.*) \((\d+) samples, (\d+\.\d\d)%; before (\d+), after (\d+)(?:; ([-+]?\d+\.\d\d)%)?\)$/s;
  const badTitles = [], badFills = [];
  let red = 0, blue = 0, white = 0;
  for (const f of frames) {
    const m = titleRe.exec(f.title);
    const want = f.d === 0 ? { before: beforeTotal, after: afterTotal } : through.get(pathOf[f.i]);
    const change = f.d === 0 ? 0 : (own.get(pathOf[f.i]) || 0);
    const wantShare = ((100 * change) / afterTotal).toFixed(2);
    const wantChange = change > 0 ? `+${wantShare}` : wantShare;
    if (!m || !want || Number(m[2]) !== f.n || Number(m[4]) !== want.before || Number(m[5]) !== want.after ||
        Number(m[5]) !== f.n || (f.d > 0 && m[6] !== wantChange) || (f.d === 0 && m[6] !== undefined))
      badTitles.push(`${f.title} (path ${pathOf[f.i]}: ${JSON.stringify(want)}, change ${wantChange})`);
    const fill = expectedFill(change, maxChange);
    if (f.fill !== fill) badFills.push(`${pathOf[f.i]}: ${f.fill}, change ${change} of ${maxChange}: ${fill}`);
    const [r, g, b] = rgbOf(f.fill);
    if (r === 255 && g === b && g < 255) red++;
    else if (b === 255 && r === g && r < 255) blue++;
    else if (r === 255 && g === 255 && b === 255) white++;
  }
  ok(badTitles.length === 0, 'every tooltip gives the samples before and after through the frame, and the change of its own',
    badTitles.slice(0, 3).join('\n'));
  ok(badFills.length === 0 && red > 0 && blue > 0 && red + blue + white === frames.length,
    `red where the frame's stacks grew (${red}), blue where they shrank (${blue}), white where unchanged (${white}), flamegraph.pl's strength`,
    badFills.slice(0, 3).join('\n'));

  const hovered = frames.find((f) => f.d === 2 && f.fill !== '#ffffff') || frames.find((f) => f.d === 1);
  await page.locator(`#frames > g:nth-child(${hovered.i + 1}) > rect`).hover();
  const details = await page.textContent('#details');
  ok(details === `Function: ${hovered.title}` && /before \d+, after \d+/.test(details), 'hover shows both counts', details);

  const chart = Number(await page.evaluate(() => document.documentElement.getAttribute('data-chart')));
  const target = frames.filter((f) => f.d === 2).sort((a, b) => b.w - a.w)[0];
  const box = await page.locator(`#frames > g:nth-child(${target.i + 1}) > rect`).boundingBox();
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
  const zoomed = (await frameInfo(page))[target.i];
  ok(near(zoomed.w, chart, 0.01) && page.url().includes(`zoom=${target.s}:${target.d}`),
    `a click zooms "${pathOf[target.i]}" to the chart's width`, `w=${zoomed.w} chart=${chart}`);
  await page.click('#unzoom');

  // search the names of one module: the share of AFTER's samples under a matching frame, counted once (a
  // stack counts where its outermost matching frame is drawn: frames narrower than 0.1 px are not)
  const term = 'app::db::';
  const drawn = new Set(pathOf);
  const matchedAfter = [...stacks].reduce((a, [stack, c]) => {
    const parts = stack.split(';');
    const k = parts.findIndex((n, j) => j > 0 && n.startsWith(term));
    return a + (k > 0 && drawn.has(parts.slice(0, k + 1).join(';')) ? c.after : 0);
  }, 0);
  const want = (100 * matchedAfter) / afterTotal;
  page.once('dialog', (dialog) => dialog.accept(term));
  await page.keyboard.press('Control+f');
  await page.waitForFunction(() => /Matched|Invalid/.test(document.getElementById('matched').textContent));
  const m = /Matched: ([0-9.]+)%/.exec(await page.textContent('#matched'));
  const lit = (await frameInfo(page)).filter((f) => f.fill === HIGHLIGHT);
  ok(m && near(Number(m[1]), want, 0.006) && lit.length > 0 && lit.every((f) => f.name.startsWith(term)),
    `search "${term}": ${m && m[1]}% matched (AFTER's samples: ${want.toFixed(3)}%), ${lit.length} frames highlighted`);
  await page.click('#search');                        // active search: the button resets it
  const after = await frameInfo(page);
  ok(after.every((f) => f.fill === frames[f.i].fill), 'resetting the search gives every frame its differential colour back');
  ok(errors.length === 0, 'no script errors', errors.join('\n'));
  if (screenshotPath) await page.screenshot({ path: screenshotPath });
  await browser.close();
}

main()
  .catch((e) => ok(false, 'the checks run', e.stack))
  .finally(finish);
