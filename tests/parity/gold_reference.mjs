// The reference's gold dataset validator and agreement figures (oh-my-knowledge), for the
// differential test. The package directory is argv[2]. One JSON line in, one out:
//   in:  {"dir": "/path/to/dataset"}            out: {"ok": bool, "issues": ["message (path:index)", ...]}
//   in:  {"pairs": [[gold, judge], ...], "scale": {"min": n, "max": n}}
//   out: {"alpha": n|null, "kappa": n|null, "pearson": n|null}   (unrounded; NaN as null)
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const root = process.argv[2];
const load = (rel) => import(pathToFileURL(join(root, 'dist', rel)).href);
const { validateGoldDataset } = await load('grading/gold-cli.js');
const { computeKrippendorffAlpha, computeWeightedKappa, computePearson } = await load('grading/human-gold.js');
const finite = (x) => (Number.isFinite(x) ? x : null);

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!line) continue;
  let out;
  try {
    const c = JSON.parse(line);
    if (c.dir !== undefined) {
      const result = validateGoldDataset(c.dir);
      out = { ok: result.ok, issues: result.issues };
    } else {
      const pairs = c.pairs.map(([a, b], i) => ({ unitId: String(i), coderA: a, coderB: b }));
      out = {
        alpha: finite(computeKrippendorffAlpha(pairs)),
        kappa: finite(computeWeightedKappa(pairs, c.scale)),
        pearson: finite(computePearson(pairs)),
      };
    }
  } catch (e) {
    out = { ok: false, crashed: String(e && e.message ? e.message : e) };
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}
