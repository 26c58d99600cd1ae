#!/usr/bin/env node
// ONNX Runtime's offline optimization, timed: the "file to fused file" baseline that
// tests/bench/run.sh compares onnx-rewrite with.
//
//   node tests/bench/ort_optimize.js IN.onnx OUT.onnx [--runs N]
//
// Each run creates an onnxruntime-node session (CPU, graphOptimizationLevel 'all',
// optimizedModelFilePath OUT, one intra-op thread like onnx-rewrite) and times
// InferenceSession.create, which loads IN, optimizes it and writes OUT; loading the
// native binding happens once before and is not timed. Prints one JSON line:
// {"wall": [s...], "cpu": [s...], "median_wall": s, "median_cpu": s, "out_bytes": n},
// CPU being the process's user + system time during create (process.cpuUsage), and
// load_wall, load_cpu: requiring onnxruntime-node (the native binding and ORT's
// environment), once.
'use strict';

const fs = require('fs');
const path = require('path');

function usage(message) {
  process.stderr.write(`ort_optimize: error: ${message}\n` +
    'usage: node ort_optimize.js IN.onnx OUT.onnx [--runs N]\n');
  process.exit(2);
}

async function main(argv) {
  const files = [];
  let runs = 1;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--runs') {
      runs = Number(argv[++i]);
      if (!Number.isInteger(runs) || runs < 1) usage('--runs needs a positive count');
    } else {
      files.push(argv[i]);
    }
  }
  if (files.length !== 2) usage('IN.onnx and OUT.onnx are required');
  const [input, output] = files;
  if (!fs.existsSync(input)) usage(`${input}: no such file`);
  // The oracle's install (tests/oracle/node_modules) is the only one in the tree.
  const loadCpu = process.cpuUsage();
  const loadStart = process.hrtime.bigint();
  const ort = require(path.join(__dirname, '..', 'oracle', 'node_modules', 'onnxruntime-node'));
  const loadWall = Number(process.hrtime.bigint() - loadStart) / 1e9;
  const loadUsed = process.cpuUsage(loadCpu);
  const seconds = [];
  const cpu = [];
  for (let r = 0; r < runs; r++) {
    fs.rmSync(output, { force: true });
    const cpuStart = process.cpuUsage();
    const start = process.hrtime.bigint();
    const session = await ort.InferenceSession.create(input, {
      executionProviders: ['cpu'],
      graphOptimizationLevel: 'all',
      optimizedModelFilePath: output,
      executionMode: 'sequential',
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      logSeverityLevel: 3,
    });
    seconds.push(Number(process.hrtime.bigint() - start) / 1e9);
    const used = process.cpuUsage(cpuStart);
    cpu.push((used.user + used.system) / 1e6);
    await session.release();
  }
  if (!fs.existsSync(output)) throw new Error(`ONNX Runtime wrote no ${output}`);
  const median = (values) => {
    const v = [...values].sort((a, b) => a - b);
    const mid = v.length >> 1;
    return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
  };
  process.stdout.write(JSON.stringify({
    wall: seconds, cpu, median_wall: median(seconds), median_cpu: median(cpu),
    out_bytes: fs.statSync(output).size,
    load_wall: loadWall, load_cpu: (loadUsed.user + loadUsed.system) / 1e6,
  }) + '\n');
}

main(process.argv.slice(2)).catch((e) => {
  process.stderr.write(`ort_optimize: error: ${e.message}\n`);
  process.exit(1);
});
