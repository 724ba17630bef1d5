// Runs one custom assertion module for pytest-omk.
//
// Usage: node node_runner.mjs REQUEST RESULT. Reads {"module", "output", "context"} as JSON from
// the file REQUEST, imports the module, calls its default export (else its named `check`) as
// fn(output, context), awaits the result and writes it as JSON to the file RESULT. What the module
// prints is never read as a verdict: the output it checks may be among it.

import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const [REQUEST, RESULT] = process.argv.slice(2);
// A check's message is shown cut far shorter; the rest is not worth a large result file.
const MESSAGE_MAX_CHARS = 65536;

function describe(err) {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

function cut(result) {
  if (result && typeof result === 'object' && typeof result.message === 'string'
      && result.message.length > MESSAGE_MAX_CHARS) {
    return { ...result, message: result.message.slice(0, MESSAGE_MAX_CHARS) };
  }
  return result;
}

function report(outcome) {
  let text;
  try {
    text = JSON.stringify(outcome);
  } catch (err) {
    text = JSON.stringify({ error: `the result is not JSON-serializable (${describe(err)})` });
  }
  writeFileSync(RESULT, text);
  // Exit now, even if the module left timers or sockets open.
  process.exit(0);
}

async function main() {
  const request = JSON.parse(readFileSync(REQUEST, 'utf8'));
  let mod;
  try {
    mod = await import(pathToFileURL(request.module).href);
  } catch (err) {
    return { error: `could not import the module (${describe(err)})` };
  }
  const fn = typeof mod.default === 'function' ? mod.default : mod.check;
  if (typeof fn !== 'function') {
    return { error: 'custom assertion module must export default or check' };
  }
  try {
    const result = await fn(request.output, request.context);
    return { result: result === undefined ? null : cut(result) };
  } catch (err) {
    return { error: `threw ${describe(err)}` };
  }
}

main().then(report, (err) => report({ error: describe(err) }));
