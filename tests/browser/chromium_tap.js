// SPDX-License-Identifier: GPL-3.0-or-later
// chromium_tap.js: what the browser checks share: TAP output (ok / finish, the exit code set by failures)
// and Debian's headless Chromium started through playwright-core in a throw-away profile directory, its
// start reported as a TAP check (a check that cannot start Chromium fails, never skips).
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

let testNumber = 0;
let failures = 0;
function ok(pass, description, diagnostic) {
  testNumber++;
  if (!pass) failures++;
  console.log(`${pass ? 'ok' : 'not ok'} ${testNumber} - ${description}`);
  if (!pass && diagnostic !== undefined) console.log(`# ${String(diagnostic).split('\n').join('\n# ')}`);
}
function finish() {
  console.log(`1..${testNumber}`);
  process.exitCode = failures ? 1 : 0;
}

// Starts Chromium headless with a fresh profile: viewport {width, height}, extra command-line args, and
// playwright's default args to leave out. Reports "Chromium starts" either way. Returns { context, close }
// (close ends Chromium and removes the profile), or null when it did not start.
async function launchChromium({ viewport, args = [], ignoreDefaultArgs }) {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'taskspy-chromium-'));
  const removeProfile = () => fs.rmSync(userDataDir, { recursive: true, force: true });
  try {
    const context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      viewport,
      timeout: 60000,
      ...(ignoreDefaultArgs ? { ignoreDefaultArgs } : {}),
      args: ['--headless', '--no-sandbox', ...args, '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    // a page's load waits as long as the checks wait for what it shows: on a loaded 2-core machine the
    // speedscope app once took over playwright's default 30 s to fire "load" (a clean-clone run, 2026-11-27)
    context.setDefaultNavigationTimeout(180000);
    ok(true, `Chromium starts (${CHROMIUM})`);
    return { context, close: async () => { await context.close(); removeProfile(); } };
  } catch (e) {
    ok(false, `Chromium starts (${CHROMIUM})`, e.message.split('\n').slice(0, 3).join('\n'));
    removeProfile();
    return null;
  }
}

module.exports = { ok, finish, launchChromium, CHROMIUM };
