#!/usr/bin/env node
// Writes docs/coverage.md: the real-graph corpus score of onnx-rewrite by kind of fusion,
// next to ONNX Runtime's own offline optimization scored the same way in the same run.
// The figures come only from score.js's JSON; nobody writes them by hand.
//
//   node tests/corpus/coverage.js [--corpus DIR] [--tool CMD] [--out FILE]
//   node tests/corpus/coverage.js --render OURS.json ORT.json [--out FILE]
//
// The first form runs the corpus's score.js twice (ours with --parity, then ONNX Runtime
// at graphOptimizationLevel 'all' through tests/bench/ort_optimize.js) and renders the
// two results; --render only renders results written before (score.js --json).
// Defaults: --corpus ../shared/corpus, --tool 'build/onnx-rewrite {in} -o {out} --quiet',
// --out docs/coverage.md. Run from the project root after its setup.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');

function usage(message) {
  process.stderr.write(`coverage: error: ${message}\n` +
    'usage: node tests/corpus/coverage.js [--corpus DIR] [--tool CMD] [--out FILE]\n' +
    '       node tests/corpus/coverage.js --render OURS.json ORT.json [--out FILE]\n');
  process.exit(2);
}

function parseArgs(argv) {
  const opts = {
    corpus: '../shared/corpus',
    tool: 'build/onnx-rewrite {in} -o {out} --quiet',
    out: 'docs/coverage.md',
    render: null,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--corpus') opts.corpus = value();
    else if (a === '--tool') opts.tool = value();
    else if (a === '--out') opts.out = value();
    else if (a === '--render') opts.render = [value(), value()];
    else usage(`unknown argument '${a}'`);
  }
  return opts;
}

function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    usage(`cannot read score results ${file}: ${e.message}`);
  }
}

/// Runs score.js over the whole corpus with `tool`; returns its parsed JSON.
function score(corpus, tool, extra, jsonFile) {
  const script = path.join(corpus, 'score.js');
  if (!fs.existsSync(script)) usage(`no score.js in ${corpus} (pass --corpus DIR)`);
  process.stderr.write(`coverage: scoring with ${tool}\n`);
  try {
    execFileSync(process.execPath, [script, '--tool', tool, '--all', ...extra, '--json', jsonFile],
      { stdio: ['ignore', 'ignore', 'inherit'] });
  } catch (e) {
    // Exit 1 is a parity failure, which the page reports; anything else stops here.
    if (e.status !== 1 || !fs.existsSync(jsonFile)) {
      process.stderr.write(`coverage: error: score.js failed (${e.message.split('\n')[0]})\n`);
      process.exit(1);
    }
  }
  return readJson(jsonFile);
}

const pct = (met, judged) => (judged ? `${Math.round((100 * met) / judged)}%` : '-');

/// The records of `group` (cpp: ort_fusion_expectations.json; generated: the Python tests'
/// graphs and ORT's expected output) by kind: ours and ORT's met/judged.
function kindRows(ours, ort, group) {
  const prefix = `${group}:`;
  const kinds = new Set(Object.keys(ours.summary.by_kind).filter((k) => k.startsWith(prefix)));
  const rows = [];
  let total = { ours: 0, ort: 0, judged: 0 };
  for (const k of [...kinds].sort()) {
    const a = ours.summary.by_kind[k];
    const b = ort.summary.by_kind[k] || { met: 0, judged: 0 };
    if (!a.judged) continue;
    rows.push(`| ${k.slice(prefix.length)} | ${a.met}/${a.judged} | ${b.met}/${b.judged} |`);
    total = { ours: total.ours + a.met, ort: total.ort + b.met, judged: total.judged + a.judged };
  }
  rows.push(`| **all** | **${total.ours}/${total.judged}** (${pct(total.ours, total.judged)}) | ` +
    `**${total.ort}/${total.judged}** (${pct(total.ort, total.judged)}) |`);
  return rows;
}

/// Every record one of the two meets and the other does not, and every record ours misses,
/// with score.js's checks.
function recordRows(ours, ort) {
  const rows = [];
  for (const [rel, m] of Object.entries(ours.models)) {
    if (m.group !== 'cpp' && m.group !== 'generated') continue;
    const theirs = (ort.models[rel] || {}).records || [];
    m.records.forEach((r, i) => {
      if (r.status === 'n/a') return;
      const o = theirs[i] ? theirs[i].status : '-';
      if (r.status === 'met' && o === 'met') return;
      const checks = (r.checks || [])
        .filter((c) => !c.ok)
        .map((c) => `${c.op} ${c.got ?? '-'} (need ${c.rule === '>=' ? `>= ${c.expected}` : 'no new'})`)
        .join(', ');
      const why = m.tool.ok ? checks || r.reason || '' : `tool failure: ${m.tool.error}`;
      rows.push(`| ${path.basename(rel)} | ${r.test} | ${r.status} | ${o} | ${why.replace(/\|/g, '\\|')} |`);
    });
  }
  return rows;
}

/// The whole exports without expectations: fused ops out, ours and ORT's.
function extraRows(ours, ort) {
  const h = (o) => Object.entries(o || {}).map(([k, n]) => `${k} ${n}`).join(', ') || '-';
  return Object.entries(ours.models)
    .filter(([, m]) => m.group === 'extra')
    .map(([rel, m]) => `| ${path.basename(rel)} | ${m.tool.ok ? h(m.fused_out) : 'tool failed'} | ` +
      `${h((ort.models[rel] || {}).fused_out)} |`);
}

function render(ours, ort) {
  const s = ours.summary;
  const lines = [
    '# Real-graph coverage',
    '',
    'Written by `node tests/corpus/coverage.js` from the corpus in `../shared/corpus` (ONNX',
    "Runtime's fusion test graphs and the op counts its tests assert; see its README). Do not",
    'edit by hand: run the script again.',
    '',
    `Run ${ours.meta.date.slice(0, 10)}. onnx-rewrite: \`${ours.meta.tool}\`.`,
    "ONNX Runtime: its own offline optimization (onnxruntime-node, graphOptimizationLevel",
    "'all', all its transformers in one session) on the same graphs, judged by the same",
    'records.',
    '',
    "## ONNX Runtime's C++ test records by kind",
    '',
    '| kind | onnx-rewrite | ONNX Runtime |',
    '|---|---|---|',
    ...kindRows(ours, ort, 'cpp'),
    '',
    "## ONNX Runtime's Python test graphs by kind",
    '',
    "A graph's record is met with at least the fused ops of ONNX Runtime's expected output.",
    '',
    '| kind | onnx-rewrite | ONNX Runtime |',
    '|---|---|---|',
    ...kindRows(ours, ort, 'generated'),
    '',
    "Parity of onnx-rewrite's outputs in ONNX Runtime (atol 1e-3, rtol 1e-3):",
    `${s.parity_pass} pass, ${s.parity_failures} fail, ${s.parity_not_runnable} not runnable ` +
      '(the original does not',
    `run on the CPU build either). Tool failures: ${s.tool_failures}.`,
    '',
    '## Records not met by both',
    '',
    '| model | record | onnx-rewrite | ONNX Runtime | failing checks (onnx-rewrite) |',
    '|---|---|---|---|---|',
    ...recordRows(ours, ort),
    '',
    '## Whole exports (no expectations): fused ops',
    '',
    '| model | onnx-rewrite | ONNX Runtime |',
    '|---|---|---|',
    ...extraRows(ours, ort),
    '',
  ];
  return lines.join('\n');
}

function main(argv) {
  const opts = parseArgs(argv);
  let ours, ort;
  if (opts.render) {
    [ours, ort] = opts.render.map(readJson);
  } else {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'onnx-rewrite-coverage-'));
    try {
      ours = score(opts.corpus, opts.tool, ['--parity'], path.join(work, 'ours.json'));
      const ortTool = `node ${path.resolve(__dirname, '../bench/ort_optimize.js')} {in} {out}`;
      ort = score(opts.corpus, ortTool, [], path.join(work, 'ort.json'));
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  }
  for (const [name, r] of [['ours', ours], ['ort', ort]])
    if (!r || !r.summary || !r.models || !r.meta) usage(`the ${name} results are not score.js JSON`);
  const text = render(ours, ort);
  const tmp = `${opts.out}.tmp`;
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, opts.out);
  process.stderr.write(`coverage: wrote ${opts.out}\n`);
}

main(process.argv.slice(2));
