// SPDX-License-Identifier: GPL-3.0-or-later
// wait_svg_check.js: a wait-time SVG (record --wait-output FILE.svg) in Debian's headless Chromium (through
// playwright-core), printing TAP: it loads without script errors, its title is "Wait time", every tooltip
// gives milliseconds ("NAME (X.XXX ms, P%)", X the frame's microseconds / 1000), the hover details line shows
// it, [runnable] frames are drawn in colours no other kind of frame has (red hues) and [suspended] frames too
// (grey), the other frames in flamegraph.pl's io colours (blue), a click on a frame zooms with its label read
// from a millisecond tooltip, and searching "\[runnable\]" matches the share of the [runnable] frames' time.
// Fails (never skips) when Chromium cannot start.
//
// usage: node wait_svg_check.js WAIT.svg SCREENSHOT.png
'use strict';

const { ok, finish, launchChromium } = require('./chromium_tap');
const { openSvg, frameInfo, rgbOf, near } = require('./svg_frames');

const [svgPath, screenshotPath] = process.argv.slice(2);

const isRed = ([r, g, b]) => r >= 200 && g <= 130 && b <= 130;
const isGrey = ([r, g, b]) => Math.max(r, g, b) - Math.min(r, g, b) <= 10 && r >= 160;
const isIo = ([r, g, b]) => b >= 190 && r <= 140 && g <= 140;

async function main() {
  const browser = await launchChromium({ viewport: { width: 1300, height: 900 } });
  if (!browser)
    return;
  const { page, errors } = await openSvg(browser, svgPath);
  const frames = await frameInfo(page);
  const title = await page.textContent('#title');
  ok(title === 'Wait time', `title "${title}"`);
  ok(frames.length > 3, `graph loads with ${frames.length} frames`);

  const msTitle = /^.+ \((\d+)\.(\d{3}) ms, \d+\.\d\d%\)$/;
  const bad = frames.filter((f) => {
    const m = msTitle.exec(f.title);
    return !m || Number(m[1]) * 1000 + Number(m[2]) !== f.n;
  });
  ok(bad.length === 0, 'every tooltip is "NAME (X.XXX ms, P%)" with X the frame\'s microseconds / 1000',
    bad.slice(0, 3).map((f) => `${f.title} (data-n ${f.n})`).join('\n'));

  const hovered = frames.find((f) => f.d === 1);
  await page.locator(`#frames > g:nth-child(${hovered.i + 1}) > rect`).hover();
  const details = await page.textContent('#details');
  ok(details === `Function: ${hovered.title}` && / ms, /.test(details), 'hover shows the milliseconds', details);

  const runnable = frames.filter((f) => f.name === '[runnable]');
  const suspended = frames.filter((f) => f.name === '[suspended]');
  const others = frames.filter((f) => f.d > 0 && f.name !== '[runnable]' && f.name !== '[suspended]');
  ok(runnable.length > 0 && runnable.every((f) => isRed(rgbOf(f.fill))),
    `${runnable.length} [runnable] frames in red hues`, runnable.map((f) => f.fill).join(' '));
  ok(suspended.length > 0 && suspended.every((f) => isGrey(rgbOf(f.fill))),
    `${suspended.length} [suspended] frames in grey`, suspended.map((f) => f.fill).join(' '));
  ok(others.length > 0 && others.every((f) => isIo(rgbOf(f.fill))),
    `${others.length} stack frames in io colours, none red or grey`,
    others.filter((f) => !isIo(rgbOf(f.fill))).map((f) => `${f.name} ${f.fill}`).join('\n'));

  // zoom into the widest depth-1 frame that is not the whole graph: its label is its name, read back from a
  // millisecond tooltip
  const chart = Number(await page.evaluate(() => document.documentElement.getAttribute('data-chart')));
  const target = frames.filter((f) => f.d === 1).sort((a, b) => b.w - a.w)[0];
  const box = await page.locator(`#frames > g:nth-child(${target.i + 1}) > rect`).boundingBox();
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
  const zoomed = (await frameInfo(page))[target.i];
  ok(near(zoomed.w, chart, 0.01) && (zoomed.label === target.name ||
    (zoomed.label.endsWith('..') && target.name.startsWith(zoomed.label.slice(0, -2)))),
  `zoom on "${target.name}": full width, labelled by its name`, `w=${zoomed.w} label=${zoomed.label}`);
  await page.click('#unzoom');

  // search [runnable]: the matched share is the [runnable] frames' share of all wait time
  const total = frames.find((f) => f.d === 0).n;
  const want = (100 * runnable.reduce((a, f) => a + f.n, 0)) / total;
  page.once('dialog', (dialog) => dialog.accept('\\[runnable\\]'));
  await page.keyboard.press('Control+f');
  await page.waitForFunction(() => /Matched|Invalid/.test(document.getElementById('matched').textContent));
  const m = /Matched: ([0-9.]+)%/.exec(await page.textContent('#matched'));
  ok(m && near(Number(m[1]), want, 0.006), `search [runnable]: ${m && m[1]}% (frames: ${want.toFixed(3)}%)`);
  ok(errors.length === 0, 'no script errors', errors.join('\n'));
  if (screenshotPath) await page.screenshot({ path: screenshotPath });
  await browser.close();
}

main()
  .catch((e) => ok(false, 'the checks run', e.stack))
  .finally(finish);
