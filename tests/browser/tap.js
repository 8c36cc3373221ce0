// SPDX-License-Identifier: GPL-3.0-or-later
// tap.js: the TAP output the browser checks share: ok() prints one numbered result (with a diagnostic on
// failure), finish() the plan and the exit status.
'use strict';

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

module.exports = { ok, finish };
