// SPDX-License-Identifier: GPL-3.0-or-later
// speedscope_check.js: checks a taskspy .speedscope.json file against the consumers that matter and prints
// TAP: the file is valid against the JSON schema shipped by the speedscope npm package
// (dist/release/file-format-schema.json, checked with ajv), its weights add up to the expected total (when
// given), and the speedscope web app from the same package, served on 127.0.0.1 and driven in Debian's
// headless Chromium through playwright-core, imports it through #profileURL= with no alert, no page error
// and no error view, showing the file's name and its active profile's name. With --trace the file is a
// Chrome trace (.trace.json) instead: it is JSON with complete ("X") events, which speedscope imports as one
// profile per thread, named after the process; the page title then names the file as served. Exits
// non-zero when any check fails (a broken file must fail); never skips: no Chromium is "not ok".
//
// usage: node speedscope_check.js FILE.speedscope.json [--total N] [--screenshot PNG] [--view VIEW]
//        node speedscope_check.js --trace FILE.trace.json [--screenshot PNG] [--view VIEW]
// VIEW is speedscope's view for the screenshot: time-ordered (its default), left-heavy or sandwich.
'use strict';

const fs = require('fs');
const http = require('http');
const path = require('path');
const Ajv = require('ajv');
const { ok, finish, launchChromium } = require('./chromium_tap');

const RELEASE_DIR = path.join(path.dirname(require.resolve('speedscope/package.json')), 'dist', 'release');
const PROFILE_ROUTE = '/profile.speedscope.json';
const TRACE_ROUTE = '/profile.trace.json';

function parseArgs(argv) {
  const args = { file: null, total: null, screenshot: null, trace: false, view: null };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--total') args.total = Number(argv[++i]);
    else if (argv[i] === '--trace') args.trace = true;
    else if (argv[i] === '--screenshot') args.screenshot = argv[++i];
    else if (argv[i] === '--view') args.view = argv[++i];
    else if (!args.file) args.file = argv[i];
    else throw new Error(`unexpected argument ${argv[i]}`);
  }
  if (!args.file) {
    throw new Error('usage: node speedscope_check.js FILE.speedscope.json [--total N] [--screenshot PNG] [--view VIEW]\n' +
      '       node speedscope_check.js --trace FILE.trace.json [--screenshot PNG] [--view VIEW]');
  }
  return args;
}

// The parsed document (a check that it is JSON), or null.
function parseJson(text) {
  try {
    const doc = JSON.parse(text);
    ok(true, 'the file is JSON');
    return doc;
  } catch (e) {
    ok(false, 'the file is JSON', e.message);
    return null;
  }
}

// The schema and the weights. Returns the parsed document, or null when it is not JSON.
function checkFile(args, text) {
  const doc = parseJson(text);
  if (doc === null) return null;
  const schema = JSON.parse(fs.readFileSync(path.join(RELEASE_DIR, 'file-format-schema.json'), 'utf8'));
  const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
  const valid = validate(doc);
  ok(valid, "valid against speedscope's file-format-schema.json",
    valid ? undefined : JSON.stringify(validate.errors.slice(0, 5), null, 1));
  const profiles = Array.isArray(doc.profiles) ? doc.profiles : [];
  ok(profiles.length > 0, `at least one profile (${profiles.length})`);
  const frames = doc.shared && Array.isArray(doc.shared.frames) ? doc.shared.frames.length : 0;
  const badIndex = profiles.some((p) => (p.samples || []).some((s) => s.some((i) => !(i >= 0 && i < frames))));
  ok(!badIndex, `every sample's frames are in the shared table (${frames} frames)`);
  if (args.total !== null) {
    let sum = 0;
    for (const p of profiles) for (const w of p.weights || []) sum += w;
    ok(sum === args.total, `weights add up to the folded total (${sum}, want ${args.total})`);
  }
  return doc;
}

// A Chrome trace: what speedscope needs to import it. Returns the parsed document, or null when it is not JSON.
function checkTrace(text) {
  const doc = parseJson(text);
  if (doc === null) return null;
  const events = doc && Array.isArray(doc.traceEvents) ? doc.traceEvents : [];
  ok(events.length > 0 && events.every((e) => typeof e.ph === 'string'), `traceEvents: events with a phase (${events.length})`);
  const complete = events.filter((e) => e.ph === 'X');
  ok(complete.length > 0 && complete.every((e) => typeof e.ts === 'number' && typeof e.dur === 'number' && e.dur >= 0),
    `complete events with ts and dur (${complete.length})`);
  return doc;
}

// Serves speedscope's release directory and the file under test on 127.0.0.1 (an ephemeral port).
function serve(fileText, route) {
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json',
    '.wasm': 'application/wasm', '.png': 'image/png', '.ico': 'image/x-icon', '.woff2': 'font/woff2' };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    if (url.pathname === route) {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(fileText);
      return;
    }
    const rel = path.normalize(decodeURIComponent(url.pathname === '/' ? '/index.html' : url.pathname));
    const file = path.join(RELEASE_DIR, rel);
    if (!file.startsWith(RELEASE_DIR + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'Content-Type': types[path.extname(file)] || 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve, reject) => {
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

async function checkApp(args, doc, fileText) {
  const route = args.trace ? TRACE_ROUTE : PROFILE_ROUTE;
  const server = await serve(fileText, route);
  const base = `http://127.0.0.1:${server.address().port}`;
  let browser = null;
  try {
    browser = await launchChromium({
      viewport: { width: 1280, height: 800 },
      // speedscope draws with WebGL: SwiftShader gives it one without a GPU
      args: ['--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
    });
    if (!browser) return;
    const page = await browser.context.newPage();
    const alerts = [];
    const errors = [];
    // an alert or a page error already fails the file: the wait below ends there, not at its bound
    let reportProblem;
    const problem = new Promise((resolve) => { reportProblem = resolve; });
    page.on('dialog', (dialog) => { alerts.push(dialog.message()); dialog.dismiss().catch(() => {}); reportProblem(); });
    page.on('pageerror', (e) => { errors.push(e.message); reportProblem(); });
    page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
    const view = args.view ? `&view=${encodeURIComponent(args.view)}` : '';
    await page.goto(`${base}/index.html#profileURL=${encodeURIComponent(base + route)}${view}`);

    const profiles = doc && Array.isArray(doc.profiles) ? doc.profiles : [];
    const active = profiles[doc && Number.isInteger(doc.activeProfileIndex) ? doc.activeProfileIndex : 0];
    // a trace has no name of its own: speedscope names it after the file served
    const fileName = args.trace ? TRACE_ROUTE.slice(1) : doc && typeof doc.name === 'string' ? doc.name : null;
    // loaded: the title names the file (speedscope sets it once the import succeeded), or an error shows
    let loaded = false;
    const settled = page.waitForFunction((name) => (name !== null && document.title.startsWith(`${name} - speedscope`)) ||
      document.body.innerText.includes('Something went wrong'), fileName, { timeout: 180000 })
      .catch(() => {});   // neither within a generous bound (a large trace on a loaded machine): reported below
    await Promise.race([settled, problem]);
    await page.waitForTimeout(500);   // let a late alert or page error arrive
    loaded = fileName !== null && (await page.title()).startsWith(`${fileName} - speedscope`);
    const body = await page.evaluate(() => document.body.innerText);
    ok(loaded, 'speedscope imports the file through #profileURL= (the page title names it)',
      `title '${await page.title()}'; page text: ${body.slice(0, 300)}`);
    ok(alerts.length === 0, 'no alert', alerts.join('\n'));
    ok(!body.includes('Something went wrong'), 'no error view', body.slice(0, 300));
    ok(errors.length === 0, 'no page error', errors.slice(0, 5).join('\n'));
    // a trace's profiles are its threads, named "PROCESS (pid P), THREAD (tid T)"
    const processName = args.trace && doc && Array.isArray(doc.traceEvents)
      ? (doc.traceEvents.find((e) => e.ph === 'M' && e.name === 'process_name') || { args: {} }).args.name : null;
    const want = args.trace ? (typeof processName === 'string' ? processName : null)
      : active && typeof active.name === 'string' ? active.name : null;
    ok(want !== null && body.includes(want), `the active profile's name is shown ('${want}')`, body.slice(0, 300));
    if (args.screenshot) await page.screenshot({ path: args.screenshot });
  } finally {
    if (browser) await browser.close();
    server.close();
  }
}

async function main() {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(e.message);
    process.exitCode = 2;
    return;
  }
  const text = fs.readFileSync(args.file, 'utf8');
  const doc = args.trace ? checkTrace(text) : checkFile(args, text);
  try {
    await checkApp(args, doc, text);
  } catch (e) {
    ok(false, 'the browser checks ran to the end', e.stack);
  }
  finish();
}

main();
