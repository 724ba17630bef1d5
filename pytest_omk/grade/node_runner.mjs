// Runs one custom assertion module for pytest-omk.
//
// Reads {"module", "output", "context"} as JSON on stdin, imports the module, calls its default
// export (else its named `check`) as fn(output, context), awaits the result and prints it as one
// JSON line after a marker. Anything the module prints itself comes before the marker and is
// ignored by the caller, which only reads what follows the last marker.

import { pathToFileURL } from 'node:url';

const MARKER = '@@pytest-omk-result@@';

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

function describe(err) {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

function report(outcome) {
  let line;
  try {
    line = JSON.stringify(outcome);
  } catch (err) {
    line = JSON.stringify({ error: `the result is not JSON-serializable (${describe(err)})` });
  }
  // Exit once the line is flushed, even if the module left timers or sockets open.
  process.stdout.write(`\n${MARKER}${line}\n`, () => process.exit(0));
}

async function main() {
  const request = JSON.parse(await readStdin());
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
    return { result: result === undefined ? null : result };
  } catch (err) {
    return { error: `threw ${describe(err)}` };
  }
}

main().then(report, (err) => report({ error: describe(err) }));
