// Grades JSON-lines cases with the reference implementation's own functions (oh-my-knowledge),
// imported from the package directory given as argv[2]. One line in, one line out:
//   in:  {"output": "...", "assertions": [...], "context": {toolCalls, costUSD, durationMs, numTurns, mockStats}}
//   out: {"passed": [bool...], "score": n, "fact": n|null, "behavior": n|null, "composite": n} or {"error": "..."}
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const root = process.argv[2];
const load = (rel) => import(pathToFileURL(join(root, 'dist', rel)).href);
const { runAssertions } = await load('grading/assertions.js');
const { computeLayeredScores } = await load('grading/layered-scores.js');

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!line) continue;
  let out;
  try {
    const c = JSON.parse(line);
    const result = runAssertions(c.output, c.assertions, c.context);
    const layered = computeLayeredScores({ assertions: result });
    out = {
      passed: result.details.map((d) => d.passed),
      score: result.score,
      fact: layered.layeredScores.factScore ?? null,
      behavior: layered.layeredScores.behaviorScore ?? null,
      composite: layered.compositeScore,
    };
  } catch (e) {
    out = { error: String(e && e.message ? e.message : e) };
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}
