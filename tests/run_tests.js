#!/usr/bin/env node
// Runs every ctest test of a build tree, like `ctest -j N`, but each googletest binary once
// instead of once per test case. CI's sanitizer build spent most of its time starting
// processes: a trivial rule test takes 0.7 s as its own ASan process, and the 1552 cases of
// rule_tests 20 minutes of CI, against 2.5 minutes as one process. ctest stays the way to run
// single tests; this is the way to run all of them.
//
//   node tests/run_tests.js <build-dir> [-j N | -jN]
//
// The googletest binaries are the commands ctest runs with --gtest_filter (ctest
// --show-only=json-v1 lists them); each runs once, with ctest's command less the filter, in
// the working directory and with the environment ctest would give its cases, and must run
// exactly as many tests as ctest lists for it. Every other test runs through ctest itself. Exit status 0 when everything passed.
'use strict';
const { spawn, spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const os = require('os');

const kBinaryTimeoutSeconds = 1800;
/// googletest's summary line, "[==========] N tests from M test suites ran.": a run that
/// lacks it ended early.
const kSummary = /\[==========\] (\d+) tests? from .* ran\./;

function usage(message) {
  if (message) console.error(`run_tests: ${message}`);
  console.error('usage: node tests/run_tests.js <build-dir> [-j N | -jN]');
  process.exit(2);
}

function parseArgs(argv) {
  const out = { build: null, jobs: os.cpus().length };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '-j' || a === '--jobs' || /^-j\d/.test(a)) {
      const n = a.length > 2 && a.startsWith('-j') ? a.slice(2) : argv[++i];
      out.jobs = Number(n);
      if (!Number.isInteger(out.jobs) || out.jobs < 1) usage(`bad job count '${n}'`);
    } else if (a.startsWith('-')) {
      usage(`unknown option '${a}'`);
    } else if (out.build === null) {
      out.build = a;
    } else {
      usage(`unexpected argument '${a}'`);
    }
  }
  if (out.build === null) usage('no build directory');
  if (!fs.existsSync(path.join(out.build, 'CTestTestfile.cmake')))
    usage(`'${out.build}' is not a configured build directory (no CTestTestfile.cmake)`);
  return out;
}

function property(test, name) {
  const p = (test.properties || []).find((x) => x.name === name);
  return p ? p.value : undefined;
}

/// ctest's test list: googletest binaries (with their case counts) and the other tests.
function listTests(build) {
  const r = spawnSync('ctest', ['--test-dir', build, '--show-only=json-v1'], {
    encoding: 'utf8',
    maxBuffer: 256 << 20,
  });
  if (r.status !== 0) {
    process.stderr.write(r.stderr || '');
    throw new Error(`ctest --show-only failed (exit ${r.status})`);
  }
  const binaries = new Map();
  const others = [];
  for (const t of JSON.parse(r.stdout).tests) {
    const cmd = t.command || [];
    if (!cmd.some((a) => a.startsWith('--gtest_filter='))) {
      others.push(t.name);
      continue;
    }
    // The binary's command: ctest's for a case, without the case's filter.
    const args = cmd.slice(1).filter((a) => !a.startsWith('--gtest_filter='));
    const exe = cmd[0];
    const key = JSON.stringify([exe, ...args]);
    if (!binaries.has(key)) {
      binaries.set(key, {
        exe,
        args,
        name: path.basename(exe),
        cwd: property(t, 'WORKING_DIRECTORY') || path.dirname(exe),
        env: property(t, 'ENVIRONMENT') || [],
        cases: 0,
      });
    }
    binaries.get(key).cases += 1;
  }
  return { binaries: [...binaries.values()], others };
}

/// The blocks of failed cases ([ RUN ] .. [ FAILED ]) and the log's tail, where a crash
/// report (ASan, UBSan) ends up.
function failureExcerpt(log) {
  const lines = log.split('\n');
  const out = [];
  let block = null;
  for (const line of lines) {
    if (line.startsWith('[ RUN      ]')) block = [line];
    else if (block) block.push(line);
    if (block && line.startsWith('[  FAILED  ]') && !line.includes(' listed below')) {
      out.push(...block);
      block = null;
    } else if (block && line.startsWith('[       OK ]')) {
      block = null;
    }
  }
  // A run that ended before googletest's summary crashed or was killed: its report is last.
  if (out.length === 0 || !kSummary.test(log))
    out.push('--- last lines of the log:', ...lines.slice(-60));
  return out.join('\n');
}

function runBinary(bin, logDir) {
  return new Promise((resolve) => {
    const env = { ...process.env };
    delete env.GTEST_FILTER;  // as ctest's cases, which name their filter, are immune to it
    for (const kv of bin.env) {
      const eq = kv.indexOf('=');
      env[kv.slice(0, eq)] = kv.slice(eq + 1);
    }
    const started = Date.now();
    const child = spawn(bin.exe, bin.args, { cwd: bin.cwd, env });
    const chunks = [];
    child.stdout.on('data', (d) => chunks.push(d));
    child.stderr.on('data', (d) => chunks.push(d));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, kBinaryTimeoutSeconds * 1000);
    child.on('error', (e) => chunks.push(Buffer.from(`cannot start: ${e.message}\n`)));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const log = Buffer.concat(chunks).toString('utf8');
      const logFile = path.join(logDir, `${bin.name}.log`);
      fs.writeFileSync(logFile, log);
      const ran = kSummary.exec(log);
      const count = ran ? Number(ran[1]) : -1;
      let problem = null;
      if (timedOut) problem = `timed out after ${kBinaryTimeoutSeconds} s`;
      else if (signal) problem = `killed by ${signal}`;
      else if (code !== 0) problem = `exit ${code}`;
      else if (count !== bin.cases) problem = `ran ${count} tests, ctest lists ${bin.cases}`;
      resolve({ bin, problem, seconds: (Date.now() - started) / 1000, count, log, logFile });
    });
  });
}

async function runBinaries(binaries, jobs, logDir) {
  const results = [];
  let next = 0;
  let done = 0;
  async function worker() {
    while (next < binaries.length) {
      const bin = binaries[next++];
      const r = await runBinary(bin, logDir);
      ++done;
      const what = r.problem ? `FAILED (${r.problem})` : 'ok';
      console.log(
        `[${done}/${binaries.length}] ${bin.name}: ${what}, ${bin.cases} tests, ${r.seconds.toFixed(1)} s`
      );
      results.push(r);
    }
  }
  await Promise.all(Array.from({ length: Math.min(jobs, binaries.length) }, worker));
  return results;
}

function escapeRegex(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const { binaries, others } = listTests(args.build);
  const total = binaries.reduce((n, b) => n + b.cases, 0) + others.length;
  console.log(
    `run_tests: ${total} tests: ${binaries.length} googletest binaries run once each ` +
      `(${total - others.length} cases), ${others.length} other tests through ctest`
  );
  const logDir = path.join(args.build, 'Testing', 'binaries');
  fs.mkdirSync(logDir, { recursive: true });
  // The biggest first, so the last one to finish is a short one.
  binaries.sort((a, b) => b.cases - a.cases);
  const results = await runBinaries(binaries, args.jobs, logDir);

  let failed = 0;
  for (const r of results.filter((x) => x.problem)) {
    ++failed;
    console.log(`\n==== ${r.bin.name}: ${r.problem} (full log: ${r.logFile})`);
    console.log(failureExcerpt(r.log));
  }

  let othersOk = true;
  if (others.length > 0) {
    const regex = `^(${others.map(escapeRegex).join('|')})$`;
    const r = spawnSync(
      'ctest',
      ['--test-dir', args.build, '--output-on-failure', '-j', String(args.jobs), '-R', regex],
      { stdio: 'inherit' }
    );
    othersOk = r.status === 0;
  }
  if (failed > 0 || !othersOk) {
    console.log(
      `run_tests: FAILED: ${failed} of ${binaries.length} googletest binaries` +
        (othersOk ? '' : ', and other tests (see ctest above)')
    );
    process.exit(1);
  }
  console.log(`run_tests: all ${total} tests passed`);
}

main().catch((e) => {
  console.error(`run_tests: ${e.message}`);
  process.exit(2);
});
