#!/usr/bin/env node
// ORT oracle: run two ONNX models on the same seeded random inputs with
// onnxruntime-node (CPU, graph optimizations disabled) and compare every output.
//
//   node tests/oracle/compare.js BEFORE.onnx AFTER.onnx [options]
//
// Exit status: 0 all outputs within tolerance, 1 some output differs,
// 2 usage or model error (message on stderr). See README.md in this directory.
'use strict';

const fs = require('fs');

const USAGE = `usage: node compare.js BEFORE.onnx AFTER.onnx [options]

options:
  --dim NAME=VALUE        size of symbolic dimension NAME (repeatable)
  --shape INPUT=D0,D1,..  full shape of an input, overriding the model's
                          (use "--shape INPUT=" for a scalar) (repeatable)
  --int-range INPUT=LO:HI integer input values drawn from [LO, HI) (default [0, 8));
                          for a bool input 0:1 (all false), 1:2 (all true) or 0:2
  --seed N                seed of the first run (default 1)
  --runs N                number of runs, with seeds N, N+1, ... (default 1)
  --atol X                absolute tolerance (default 1e-4)
  --rtol X                relative tolerance (default 1e-3)
  --threads N             ORT intra-op threads (default 1, deterministic)
  --json                  print one JSON object instead of text
  -h, --help              this text

An element passes when |after - before| <= atol + rtol * |before| (numpy.isclose
with BEFORE as the reference); NaN matches only NaN. A floating output that BEFORE
never makes finite (NaN or infinite everywhere) fails: it shows nothing. Exit 0 if
every element of every output passes and shapes/types agree, 1 otherwise, 2 on
usage/model errors.`;

class UsageError extends Error {}
class ModelError extends Error {}

// ---------------------------------------------------------------- arguments --

function parseNumber(opt, text, { integer = false, min = -Infinity } = {}) {
  const v = Number(text);
  if (text === undefined || text.trim() === '' || !Number.isFinite(v) || (integer && !Number.isInteger(v)) || v < min) {
    throw new UsageError(`${opt}: bad value '${text}'`);
  }
  return v;
}

function splitKeyValue(opt, text) {
  const i = text === undefined ? -1 : text.indexOf('=');
  if (i <= 0) throw new UsageError(`${opt}: expected NAME=VALUE, got '${text}'`);
  return [text.slice(0, i), text.slice(i + 1)];
}

function parseArgs(argv) {
  const a = {
    files: [], dims: new Map(), shapes: new Map(), intRanges: new Map(),
    seed: 1, runs: 1, atol: 1e-4, rtol: 1e-3, threads: 1, json: false,
  };
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    let val;
    if (arg.startsWith('--') && arg.includes('=')) {
      const j = arg.indexOf('=');
      val = arg.slice(j + 1);
      arg = arg.slice(0, j);
    }
    const next = () => {
      if (val !== undefined) return val;
      if (i + 1 >= argv.length) throw new UsageError(`${arg} needs a value`);
      return argv[++i];
    };
    switch (arg) {
      case '-h': case '--help': a.help = true; break;
      case '--json': a.json = true; break;
      case '--dim': {
        const [k, v] = splitKeyValue(arg, next());
        a.dims.set(k, parseNumber(`--dim ${k}`, v, { integer: true, min: 0 }));
        break;
      }
      case '--shape': {
        const [k, v] = splitKeyValue(arg, next());
        const dims = v.trim() === '' ? [] : v.split(/[,x]/).map((d) => parseNumber(`--shape ${k}`, d, { integer: true, min: 0 }));
        a.shapes.set(k, dims);
        break;
      }
      case '--int-range': {
        const [k, v] = splitKeyValue(arg, next());
        const m = /^\s*(-?\d+)\s*:\s*(-?\d+)\s*$/.exec(v);
        if (!m) throw new UsageError(`--int-range ${k}: expected LO:HI, got '${v}'`);
        const lo = Number(m[1]); const hi = Number(m[2]);
        if (!(hi > lo) || !Number.isSafeInteger(lo) || !Number.isSafeInteger(hi)) {
          throw new UsageError(`--int-range ${k}: need LO < HI (half-open [LO, HI)), got '${v}'`);
        }
        a.intRanges.set(k, [lo, hi]);
        break;
      }
      case '--seed': a.seed = parseNumber(arg, next(), { integer: true, min: 0 }); break;
      case '--runs': a.runs = parseNumber(arg, next(), { integer: true, min: 1 }); break;
      case '--atol': a.atol = parseNumber(arg, next(), { min: 0 }); break;
      case '--rtol': a.rtol = parseNumber(arg, next(), { min: 0 }); break;
      case '--threads': a.threads = parseNumber(arg, next(), { integer: true, min: 1 }); break;
      default:
        if (arg.startsWith('-') && arg !== '-') throw new UsageError(`unknown option ${arg}`);
        a.files.push(arg);
    }
  }
  if (!a.help && a.files.length !== 2) throw new UsageError('expected exactly two model files: BEFORE.onnx AFTER.onnx');
  return a;
}

// --------------------------------------------------------------------- PRNG --

// FNV-1a hash of a string, so each input gets its own stream independent of input order.
function fnv1a(str) {
  let h = 0x811c9dc5;
  for (const b of Buffer.from(str, 'utf8')) { h ^= b; h = Math.imul(h, 0x01000193); }
  return h >>> 0;
}

// mulberry32: tiny, fast, good enough for test data; returns uint32.
function mulberry32(seed) {
  let s = seed >>> 0;
  return function next() {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

function streamFor(seed, inputName) {
  const r = mulberry32((Math.imul(seed >>> 0, 0x9e3779b1) ^ fnv1a(inputName)) >>> 0);
  r(); r(); // decorrelate neighbouring seeds a little
  return r;
}

// uniform double in [0, 1) with 53 random bits
function unit53(r) { return ((r() >>> 5) * 67108864 + (r() >>> 6)) / 9007199254740992; }

// ----------------------------------------------------------------- float16 --

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

function floatToHalfBits(v) {
  f32[0] = v;
  const x = u32[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0); // inf / nan
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00; // overflow -> inf
  if (e <= 0) { // subnormal half (or zero)
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (rem > halfway || (rem === halfway && (h & 1))) h++;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1))) h++; // may carry into exponent: still correct
  return sign | h;
}

function halfBitsToFloat(h) {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

// ------------------------------------------------------------ element types --

// ONNX TensorProto.DataType -> ORT JS type name (used by the protobuf fallback).
const ONNX_ELEM_TYPE = {
  1: 'float32', 2: 'uint8', 3: 'int8', 4: 'uint16', 5: 'int16', 6: 'int32', 7: 'int64', 8: 'string',
  9: 'bool', 10: 'float16', 11: 'float64', 12: 'uint32', 13: 'uint64', 16: 'bfloat16',
};

const INT_TYPES = {
  int8: [Int8Array, -128, 128], uint8: [Uint8Array, 0, 256],
  int16: [Int16Array, -32768, 32768], uint16: [Uint16Array, 0, 65536],
  int32: [Int32Array, -(2 ** 31), 2 ** 31], uint32: [Uint32Array, 0, 2 ** 32],
  int64: [BigInt64Array, -(2 ** 53), 2 ** 53], uint64: [BigUint64Array, 0, 2 ** 53],
};
const FLOAT_TYPES = new Set(['float32', 'float64', 'float16']);
const SUPPORTED = new Set([...Object.keys(INT_TYPES), ...FLOAT_TYPES, 'bool']);

function generate(type, count, r, intRange) {
  if (type === 'float32') {
    const d = new Float32Array(count);
    for (let i = 0; i < count; i++) d[i] = (r() >>> 8) / 8388608 - 1; // exact in float32, [-1, 1)
    return d;
  }
  if (type === 'float64') {
    const d = new Float64Array(count);
    for (let i = 0; i < count; i++) d[i] = unit53(r) * 2 - 1;
    return d;
  }
  if (type === 'float16') {
    const d = new Uint16Array(count); // raw IEEE half bits; ORT accepts Uint16Array for 'float16'
    for (let i = 0; i < count; i++) d[i] = floatToHalfBits((r() >>> 8) / 8388608 - 1);
    return d;
  }
  if (type === 'bool') {
    const d = new Uint8Array(count);
    // A range pins a flag (0:1 false, 1:2 true); 50/50 otherwise.
    const [lo, hi] = intRange || [0, 2];
    for (let i = 0; i < count; i++) d[i] = hi - lo === 1 ? lo : r() >>> 31;
    return d;
  }
  const [Ctor] = INT_TYPES[type];
  const [lo, hi] = intRange;
  const d = new Ctor(count);
  const big = Ctor === BigInt64Array || Ctor === BigUint64Array;
  for (let i = 0; i < count; i++) {
    const v = lo + Math.floor(unit53(r) * (hi - lo));
    d[i] = big ? BigInt(v) : v;
  }
  return d;
}

// Output data as something indexable by number; bigints stay bigints (compared exactly).
function outputValues(tensor) {
  const d = tensor.data;
  if (tensor.type === 'float16' && d instanceof Uint16Array) {
    const out = new Float64Array(d.length);
    for (let i = 0; i < d.length; i++) out[i] = halfBitsToFloat(d[i]);
    return out;
  }
  if (tensor.type === 'string') throw new ModelError(`string outputs are not supported`);
  return d;
}

// ------------------------------------------------- minimal protobuf reader --
// Only what is needed to read graph inputs/outputs/initializer names from a
// ModelProto, used when ORT's inputMetadata is missing or ambiguous
// (ORT reports shape [] both for a scalar and for "no shape in the model").

function readVarint(buf, pos) {
  let v = 0; let mul = 1;
  for (;;) {
    if (pos >= buf.length) throw new Error('truncated varint');
    const b = buf[pos++];
    v += (b & 0x7f) * mul;
    if (b < 0x80) return [v, pos];
    mul *= 128;
    if (mul > 2 ** 70) throw new Error('varint too long');
  }
}

function* fields(buf, start, end) {
  let pos = start;
  while (pos < end) {
    let key; [key, pos] = readVarint(buf, pos);
    const field = Math.floor(key / 8); const wire = key % 8;
    if (wire === 0) { let v; [v, pos] = readVarint(buf, pos); yield { field, wire, value: v }; }
    else if (wire === 1) { pos += 8; }
    else if (wire === 5) { pos += 4; }
    else if (wire === 2) {
      let len; [len, pos] = readVarint(buf, pos);
      if (pos + len > end) throw new Error('truncated field');
      yield { field, wire, start: pos, end: pos + len };
      pos += len;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
  if (pos !== end) throw new Error('truncated message');
}

const str = (buf, f) => buf.toString('utf8', f.start, f.end);

function parseValueInfo(buf, s, e) {
  const vi = { name: '', isTensor: false, type: undefined, shape: null };
  for (const f of fields(buf, s, e)) {
    if (f.field === 1 && f.wire === 2) vi.name = str(buf, f);
    if (f.field === 2 && f.wire === 2) {
      for (const t of fields(buf, f.start, f.end)) {
        if (t.field !== 1 || t.wire !== 2) continue; // only tensor_type
        vi.isTensor = true;
        for (const tt of fields(buf, t.start, t.end)) {
          if (tt.field === 1 && tt.wire === 0) vi.type = ONNX_ELEM_TYPE[tt.value] || `onnx-type-${tt.value}`;
          if (tt.field === 2 && tt.wire === 2) {
            vi.shape = [];
            for (const d of fields(buf, tt.start, tt.end)) {
              if (d.field !== 1 || d.wire !== 2) continue;
              let dim = '';
              for (const x of fields(buf, d.start, d.end)) {
                if (x.field === 1 && x.wire === 0) dim = x.value > 2 ** 53 ? '' : x.value;
                if (x.field === 2 && x.wire === 2) dim = str(buf, x);
              }
              vi.shape.push(dim);
            }
          }
        }
      }
    }
  }
  return vi;
}

function parseModelIO(file) {
  const buf = fs.readFileSync(file);
  const res = { inputs: [], outputs: [], initializers: new Set() };
  let sawGraph = false;
  for (const f of fields(buf, 0, buf.length)) {
    if (f.field !== 7 || f.wire !== 2) continue;
    sawGraph = true;
    for (const g of fields(buf, f.start, f.end)) {
      if (g.wire !== 2) continue;
      if (g.field === 11) res.inputs.push(parseValueInfo(buf, g.start, g.end));
      else if (g.field === 12) res.outputs.push(parseValueInfo(buf, g.start, g.end));
      else if (g.field === 5) {
        for (const t of fields(buf, g.start, g.end)) if (t.field === 8 && t.wire === 2) res.initializers.add(str(buf, t));
      }
    }
  }
  if (!sawGraph) throw new Error('no graph in ModelProto');
  return res;
}

// ----------------------------------------------------------------- sessions --

function loadOrt() {
  try {
    return require('onnxruntime-node');
  } catch (e) {
    throw new ModelError(`cannot load onnxruntime-node (${e.message.split('\n')[0]}); ` +
      `run .ci/setup.sh or 'ONNXRUNTIME_NODE_INSTALL=skip npm ci' in ${__dirname}`);
  }
}

async function openSession(ort, file, threads) {
  if (!fs.existsSync(file)) throw new ModelError(`${file}: no such file`);
  try {
    return await ort.InferenceSession.create(file, {
      executionProviders: ['cpu'],
      graphOptimizationLevel: 'disabled',
      executionMode: 'sequential',
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      logSeverityLevel: 3,
    });
  } catch (e) {
    throw new ModelError(`${file}: cannot load model: ${e.message}`);
  }
}

// [{name, type, shape: (number|string)[] | null (unknown rank)}] for the model's feedable inputs.
function inputSpecs(session, file) {
  const meta = Array.isArray(session.inputMetadata) ? session.inputMetadata : null;
  let proto = null;
  const protoIO = () => {
    if (proto === null) {
      try { proto = parseModelIO(file); } catch (e) { proto = { error: e.message }; }
    }
    return proto;
  };
  return session.inputNames.map((name) => {
    let m = meta && meta.find((x) => x.name === name);
    if (!m || (m.isTensor && m.shape.length === 0)) {
      const p = protoIO();
      const pm = p.inputs && p.inputs.find((x) => x.name === name);
      if (pm) m = pm;
      else if (!m) throw new ModelError(`${file}: cannot determine metadata of input '${name}'` + (p.error ? ` (${p.error})` : ''));
      // else: keep ORT's answer ([] = treat as scalar)
    }
    if (m.isTensor === false) throw new ModelError(`${file}: input '${name}' is not a tensor; not supported`);
    if (!SUPPORTED.has(m.type)) throw new ModelError(`${file}: input '${name}' has element type ${m.type}; not supported`);
    return { name, type: m.type, shape: m.shape === null ? null : Array.from(m.shape) };
  });
}

function sameNames(what, a, b, files) {
  const sa = new Set(a); const sb = new Set(b);
  const onlyA = a.filter((x) => !sb.has(x));
  const onlyB = b.filter((x) => !sa.has(x));
  if (onlyA.length || onlyB.length) {
    const parts = [];
    if (onlyA.length) parts.push(`only in ${files[0]}: ${onlyA.join(', ')}`);
    if (onlyB.length) parts.push(`only in ${files[1]}: ${onlyB.join(', ')}`);
    throw new ModelError(`models have different ${what} names (${parts.join('; ')})`);
  }
}

function resolveShapes(specs, args, file) {
  const problems = [];
  const usedDims = new Set();
  for (const s of specs) {
    if (args.shapes.has(s.name)) { s.resolved = args.shapes.get(s.name).slice(); continue; }
    if (s.shape === null) { problems.push(`input '${s.name}' has no shape in the model; pass --shape ${s.name}=D0,D1,...`); continue; }
    s.resolved = s.shape.map((d, axis) => {
      if (typeof d === 'number' && d >= 0) return d;
      if (typeof d === 'string' && d !== '') {
        usedDims.add(d);
        if (args.dims.has(d)) return args.dims.get(d);
        problems.push(`symbolic dimension '${d}' (input '${s.name}', axis ${axis}) is not set; pass --dim ${d}=N`);
        return -1;
      }
      problems.push(`input '${s.name}' axis ${axis} has neither a size nor a name; pass --shape ${s.name}=D0,D1,...`);
      return -1;
    });
  }
  for (const k of args.shapes.keys()) if (!specs.some((s) => s.name === k)) problems.push(`--shape ${k}: ${file} has no input '${k}'`);
  for (const [k] of args.intRanges) {
    const s = specs.find((x) => x.name === k);
    if (!s) problems.push(`--int-range ${k}: ${file} has no input '${k}'`);
    else if (!INT_TYPES[s.type] && s.type !== 'bool') problems.push(`--int-range ${k}: input '${k}' is ${s.type}, not an integer type or bool`);
    else {
      const [, tlo, thi] = s.type === 'bool' ? [null, 0, 2] : INT_TYPES[s.type];
      const [lo, hi] = args.intRanges.get(k);
      if (lo < tlo || hi > thi) problems.push(`--int-range ${k}: [${lo}, ${hi}) does not fit ${s.type}`);
    }
  }
  if (problems.length) throw new ModelError(`${file}: ${problems.join('; ')}`);
  const unused = [...args.dims.keys()].filter((d) => !usedDims.has(d));
  return unused;
}

// AFTER must accept exactly the feed built for BEFORE.
function checkAfterInputs(beforeSpecs, afterSpecs, files) {
  for (const a of afterSpecs) {
    const b = beforeSpecs.find((x) => x.name === a.name);
    if (a.type !== b.type) {
      throw new ModelError(`input '${a.name}' has type ${b.type} in ${files[0]} but ${a.type} in ${files[1]}`);
    }
    if (a.shape === null) continue;
    const bad = a.shape.length !== b.resolved.length ||
      a.shape.some((d, i) => typeof d === 'number' && d >= 0 && d !== b.resolved[i]);
    if (bad) {
      throw new ModelError(`input '${a.name}' shape [${a.shape}] in ${files[1]} does not accept the shape [${b.resolved}] fed from ${files[0]}`);
    }
  }
}

// --------------------------------------------------------------- comparison --

function newStats(name) {
  return {
    name, ok: true, shape_equal: true, type_equal: true,
    shape_before: null, shape_after: null, type_before: null, type_after: null,
    elements: 0, mismatches: 0, nan_mismatches: 0, max_abs: 0, max_rel: 0, worst: null,
    floating: false, finite_before: 0,
  };
}

function unravel(index, dims) {
  const idx = new Array(dims.length).fill(0);
  for (let k = dims.length - 1; k >= 0; k--) { idx[k] = index % dims[k]; index = Math.floor(index / dims[k]); }
  return idx;
}

// Accumulate one run's comparison of a single output into stats.
function compareOutput(st, tb, ta, atol, rtol, run, seed) {
  st.shape_before = Array.from(tb.dims); st.shape_after = Array.from(ta.dims);
  st.type_before = tb.type; st.type_after = ta.type;
  if (tb.type !== ta.type) { st.type_equal = false; st.ok = false; }
  const sameShape = tb.dims.length === ta.dims.length && tb.dims.every((d, i) => d === ta.dims[i]);
  if (!sameShape) { st.shape_equal = false; st.ok = false; return; }
  const B = outputValues(tb); const A = outputValues(ta);
  const n = B.length;
  if (A.length !== n) { st.shape_equal = false; st.ok = false; return; }
  st.elements += n;
  st.floating = st.floating || tb.type.startsWith('float') || tb.type === 'bfloat16';
  let worstExcess = st.worst ? st.worst.excess : -Infinity;
  for (let i = 0; i < n; i++) {
    let b = B[i]; let a = A[i];
    if (typeof b === 'number' && Number.isFinite(b)) st.finite_before++;
    let diff;
    if (typeof b === 'bigint' || typeof a === 'bigint') {
      const d = BigInt(a) - BigInt(b);
      diff = Number(d < 0n ? -d : d);
      b = Number(b); a = Number(a);
    } else if (a === b) {
      continue;
    } else {
      const bn = Number.isNaN(b); const an = Number.isNaN(a);
      if (bn && an) continue;
      if (bn || an) {
        st.nan_mismatches++; st.mismatches++; st.ok = false; // not folded into max_abs/max_rel
        if (worstExcess !== Infinity) { worstExcess = Infinity; st.worst = { run, seed, index: i, before: b, after: a, excess: Infinity }; }
        continue;
      }
      diff = Math.abs(a - b);
    }
    if (diff === 0) continue;
    const rel = diff / Math.max(Math.abs(a), Math.abs(b), 1e-6);
    if (diff > st.max_abs) st.max_abs = diff;
    if (rel > st.max_rel) st.max_rel = rel;
    const excess = diff - (atol + rtol * Math.abs(b));
    if (!(excess <= 0)) { st.mismatches++; st.ok = false; } // also catches inf vs finite (NaN excess)
    const ex = Number.isNaN(excess) ? Infinity : excess;
    if (ex > worstExcess) { worstExcess = ex; st.worst = { run, seed, index: i, before: b, after: a, excess: ex }; }
  }
}

// ------------------------------------------------------------------- output --

function fmt(x) {
  if (Number.isNaN(x)) return 'nan';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  if (x === 0) return '0';
  return x.toExponential(1).replace(/e([+-])(\d)$/, 'e$10$2');
}

function fmtVal(x) {
  if (typeof x !== 'number' || !Number.isFinite(x)) return String(x);
  return Number.isInteger(x) ? String(x) : String(Number(x.toPrecision(9)));
}

const shapeStr = (s) => `[${s.join(',')}]`;

function jsonNumber(x) {
  if (typeof x === 'number' && !Number.isFinite(x)) return Number.isNaN(x) ? 'NaN' : (x > 0 ? 'Infinity' : '-Infinity');
  return x;
}

function textLine(st) {
  const shape = st.shape_equal ? shapeStr(st.shape_before) : `${shapeStr(st.shape_before)} vs ${shapeStr(st.shape_after)}`;
  let line = `output ${st.name}: shape ${shape}`;
  if (!st.type_equal) line += ` type ${st.type_before} vs ${st.type_after}`;
  if (!st.shape_equal) return `${line} FAIL (shape mismatch)`;
  line += ` max_abs ${fmt(st.max_abs)} max_rel ${fmt(st.max_rel)}`;
  if (st.ok) return `${line} OK`;
  const why = [];
  if (!st.type_equal) why.push('type mismatch');
  if (st.vacuous) why.push('the original never gives a finite value here (NaN or infinite everywhere): the comparison shows nothing');
  if (st.mismatches) {
    let w = `${st.mismatches}/${st.elements} elements not close`;
    if (st.nan_mismatches) w += `, ${st.nan_mismatches} NaN mismatches`;
    if (st.worst) {
      w += `; worst ${shapeStr(unravel(st.worst.index, st.shape_before))}`;
      if (st.worst.run > 0) w += ` (seed ${st.worst.seed})`;
      w += ` before=${fmtVal(st.worst.before)} after=${fmtVal(st.worst.after)}`;
    }
    why.push(w);
  }
  return `${line} FAIL (${why.join('; ')})`;
}

// --------------------------------------------------------------------- main --

async function main(argv) {
  const args = parseArgs(argv);
  if (args.help) { process.stdout.write(USAGE + '\n'); return 0; }
  const files = args.files;
  const ort = loadOrt();
  const sessions = [];
  try {
    for (const f of files) sessions.push(await openSession(ort, f, args.threads));
    const [sb, sa] = sessions;

    sameNames('input', sb.inputNames, sa.inputNames, files);
    sameNames('output', sb.outputNames, sa.outputNames, files);

    const specs = inputSpecs(sb, files[0]);
    const unusedDims = resolveShapes(specs, args, files[0]);
    for (const d of unusedDims) process.stderr.write(`compare.js: warning: --dim ${d} is not used by any input of ${files[0]}\n`);
    checkAfterInputs(specs, inputSpecs(sa, files[1]), files);

    const stats = sb.outputNames.map((n) => newStats(n));
    const seeds = [];
    for (let run = 0; run < args.runs; run++) {
      const seed = args.seed + run;
      seeds.push(seed);
      const feeds = {};
      for (const s of specs) {
        const count = s.resolved.reduce((x, y) => x * y, 1);
        const range = args.intRanges.get(s.name) || (s.type === 'bool' ? [0, 2] : [0, 8]);
        feeds[s.name] = new ort.Tensor(s.type, generate(s.type, count, streamFor(seed, s.name), range), s.resolved);
      }
      const results = [];
      for (let k = 0; k < 2; k++) {
        try {
          results.push(await sessions[k].run(feeds));
        } catch (e) {
          throw new ModelError(`${files[k]}: run failed (seed ${seed}): ${e.message}`);
        }
      }
      for (const st of stats) compareOutput(st, results[0][st.name], results[1][st.name], args.atol, args.rtol, run, seed);
    }
    // A floating output the original never makes finite (NaN or infinite everywhere, as a
    // float16 model whose mask overflowed) proves nothing however the other model agrees.
    for (const st of stats) {
      st.vacuous = st.floating && st.elements > 0 && st.finite_before === 0;
      if (st.vacuous) st.ok = false;
    }

    const ok = stats.every((s) => s.ok);
    if (args.json) {
      const out = {
        ok, before: files[0], after: files[1], atol: args.atol, rtol: args.rtol,
        seeds, dims: Object.fromEntries(args.dims),
        inputs: specs.map((s) => ({
          name: s.name, type: s.type, shape: s.resolved,
          range: INT_TYPES[s.type] ? (args.intRanges.get(s.name) || [0, 8]) : s.type === 'bool' ? (args.intRanges.get(s.name) || [0, 2]) : [-1, 1],
        })),
        outputs: stats.map((s) => ({
          name: s.name, ok: s.ok, shape: s.shape_before, shape_after: s.shape_after, shape_equal: s.shape_equal,
          type: s.type_before, type_after: s.type_after, type_equal: s.type_equal,
          elements: s.elements, mismatches: s.mismatches, nan_mismatches: s.nan_mismatches,
          never_finite: s.vacuous,
          max_abs: jsonNumber(s.shape_equal ? s.max_abs : null), max_rel: jsonNumber(s.shape_equal ? s.max_rel : null),
          worst: s.worst && s.shape_equal ? {
            seed: s.worst.seed, index: unravel(s.worst.index, s.shape_before),
            before: jsonNumber(s.worst.before), after: jsonNumber(s.worst.after),
          } : null,
        })),
      };
      process.stdout.write(JSON.stringify(out, null, 2) + '\n');
    } else {
      const lines = specs.map((s) => {
        const pinned = s.type === 'bool' && args.intRanges.has(s.name) && args.intRanges.get(s.name)[1] - args.intRanges.get(s.name)[0] === 1;
        const r = INT_TYPES[s.type] ? `ints in [${(args.intRanges.get(s.name) || [0, 8]).join(', ')})` : pinned ? `all ${args.intRanges.get(s.name)[0] ? 'true' : 'false'}` : s.type === 'bool' ? 'random bool' : 'uniform [-1, 1)';
        return `input ${s.name}: ${s.type} ${shapeStr(s.resolved)} ${r}`;
      });
      for (const st of stats) lines.push(textLine(st));
      const nOk = stats.filter((s) => s.ok).length;
      const seedText = seeds.length > 1 ? `seeds ${seeds[0]}..${seeds[seeds.length - 1]}` : `seed ${seeds[0]}`;
      lines.push(`compare: ${ok ? 'OK' : 'DIFFER'} (${nOk}/${stats.length} outputs within atol ${args.atol} + rtol ${args.rtol}*|before|; ${seedText})`);
      process.stdout.write(lines.join('\n') + '\n');
    }
    return ok ? 0 : 1;
  } finally {
    for (const s of sessions) { try { await s.release(); } catch (_) { /* ignore */ } }
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (e) => {
    if (e instanceof UsageError) {
      process.stderr.write(`compare.js: ${e.message}\n\n${USAGE}\n`);
    } else if (e instanceof ModelError) {
      process.stderr.write(`compare.js: ${e.message}\n`);
    } else {
      process.stderr.write(`compare.js: internal error: ${e && e.stack || e}\n`);
    }
    process.exitCode = 2;
  });
}

module.exports = { mulberry32, floatToHalfBits, halfBitsToFloat, parseModelIO, generate, main };
