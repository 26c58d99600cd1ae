#!/usr/bin/env python3
"""Writes docs/benchmarks.md from the results tests/bench/run.sh collected in one run.

Inputs come from the environment run.sh sets: RESULTS (a folder of phases_<layers>.json,
cli_<layers>.json, cli_stats_<layers>.json, ort_<model>.json, rss_big.json,
rss_small.json, rules.txt), DOC (the output path), LAYERS_RUN, CLI_LAYERS_RUN, QUICK and
the MACHINE_*/RUN_*/LOAD_* descriptions. Every verdict is computed here from those
numbers; only the standard library is used.
"""
import glob
import json
import os

PHASES = ["parse", "infer", "import", "rewrite", "recheck", "export", "serialize"]
# Op types that only a fusion produces (in any domain): what "fused ops" counts.
FUSED_OPS = [
    "LayerNormalization", "SimplifiedLayerNormalization", "SkipLayerNormalization",
    "SkipSimplifiedLayerNormalization", "RMSNormalization", "EmbedLayerNormalization",
    "Attention", "MultiHeadAttention", "GroupQueryAttention", "PackedAttention",
    "Gelu", "BiasGelu", "FastGelu", "QuickGelu", "BiasSplitGelu", "FusedMatMul",
    "FusedGemm", "FusedConv", "RotaryEmbedding", "BiasSoftmax", "BiasAdd",
    "MatMulScale", "GemmFastGelu", "BiasDropout",
]
# The fused ops among them that are whole attention.
ATTENTION_OPS = ("Attention", "MultiHeadAttention", "GroupQueryAttention")
TARGET_RATIO_INTERP = 3.0       # compiled at least 3x faster than interpreted
TARGET_REWRITE_OF_PARSE = 10.0  # rewrite core under 10 % of protobuf parse time
TARGET_ORT_SPEEDUP = 5.0        # file to fused file at least 5x faster than ONNX Runtime
TARGET_FLATNESS = 1.25          # per-node cost within 25 % from 10^3 to 10^6 nodes
TARGET_RSS_SLACK = 0.05         # peak RSS within 5 % whatever the weight size


def load(path):
    with open(path) as f:
        return json.load(f)


def fmt_ms(ms):
    return f"{ms:.3f}" if ms < 1 else f"{ms:.2f}" if ms < 100 else f"{ms:,.0f}"


def fmt_s(s):
    return f"{s * 1e3:.1f} ms" if s < 1 else f"{s:.2f} s"


def verdict(ok):
    return "**met**" if ok else "**not met**"


def pipeline_runs(results, sizes):
    """{layers: counters of the `pipeline` benchmark} (sizes that ran)."""
    runs = {}
    context = {}
    for n in sizes:
        path = os.path.join(results, f"phases_{n}.json")
        if not os.path.exists(path):
            continue
        data = load(path)
        context = data["context"]
        for b in data["benchmarks"]:
            if "error_occurred" in b and b["error_occurred"]:
                continue
            runs[n] = b
    return context, runs


def fused_ops(before, after):
    """Fused op nodes `after` gained over `before`: per fused op type, the increase (never
    negative, so turning a LayerNormalization into a SkipLayerNormalization counts once)."""
    types = {op for op in set(before) | set(after) if op.split("::")[1] in FUSED_OPS}
    return sum(max(0, after.get(op, 0) - before.get(op, 0)) for op in types)


def fused_surplus(before, ours, theirs):
    """Says which fused op types ONNX Runtime made more of than onnx-rewrite, and, when
    onnx-rewrite fused attention there and ONNX Runtime did not, what those ops are: the
    per-head products an attention node of ours computes inside (one MultiHeadAttention
    for all the heads of a layer, where ONNX Runtime fuses each head's Q.K^T alone)."""
    def gained(after, op):
        return max(0, after.get(op, 0) - before.get(op, 0))

    types = sorted(op for op in set(ours) | set(theirs) | set(before)
                   if op.split("::")[1] in FUSED_OPS and gained(theirs, op) > gained(ours, op))
    listed = ", ".join(f"{op.split('::')[1]} {gained(theirs, op)} against {gained(ours, op)}"
                       for op in types)
    ours_attention = sum(gained(ours, op) for op in ours if op.split("::")[1] in ATTENTION_OPS)
    theirs_attention = sum(gained(theirs, op) for op in theirs
                           if op.split("::")[1] in ATTENTION_OPS)
    if ours_attention > theirs_attention and all(op.endswith("::FusedMatMul") for op in types):
        return (f"{listed}, the per-head score products that onnx-rewrite's {ours_attention}"
                f" attention node(s) compute inside (ONNX Runtime fuses each head's MatMul"
                f" and scale alone and leaves the heads' Softmax and context MatMul)")
    return f"{listed}; the op-type list below shows which fusions the shipped rules miss there"


def main():
    env = os.environ
    results, doc = env["RESULTS"], env["DOC"]
    quick = bool(env.get("QUICK"))
    sizes = [int(x) for x in env["LAYERS_RUN"].split()]
    cli_sizes = [int(x) for x in env["CLI_LAYERS_RUN"].split()]
    context, runs = pipeline_runs(results, sizes)
    ort = [load(p) for p in sorted(glob.glob(os.path.join(results, "ort_*.json")),
                                   key=lambda p: (not os.path.basename(p).startswith("ort_transformer_"),
                                                  len(p), p))]
    startup = load(os.path.join(results, "startup.json"))
    cli_done = [n for n in cli_sizes if os.path.exists(os.path.join(results, f"cli_stats_{n}.json"))]
    cli_stats = load(os.path.join(results, f"cli_stats_{max(cli_done)}.json")) if cli_done else None
    rss_big = load(os.path.join(results, "rss_big_all.json"))
    rss_small = load(os.path.join(results, "rss_small_all.json"))
    rss_big_skip = load(os.path.join(results, "rss_big_skip.json"))
    rss_small_skip = load(os.path.join(results, "rss_small_skip.json"))
    with open(os.path.join(results, "rules.txt")) as f:
        rule_lines = [line.rstrip() for line in f if line.strip()]

    lines = []
    add = lines.append

    # ---- verdicts, computed first so the summary can lead -------------------------------
    verdicts = []
    ratios = {n: r["interp_over_compiled"] for n, r in runs.items()}
    if ratios:
        worst = min(ratios, key=ratios.get)
        big = {n: v for n, v in ratios.items() if runs[n]["nodes"] >= 1000}
        ok = all(v >= TARGET_RATIO_INTERP for v in ratios.values())
        below = [f"{int(runs[n]['nodes']):,} nodes ({v:.1f}x)" for n, v in ratios.items()
                 if v < TARGET_RATIO_INTERP]
        why = (f"interpreted/compiled rewrite time is {min(ratios.values()):.2f}x to "
               f"{max(ratios.values()):.2f}x over all sizes")
        if big:
            why += f" ({min(big.values()):.2f}x to {max(big.values()):.2f}x from 10^3 nodes up)"
        if ok:
            why += "."
        elif len(below) == len(ratios):
            why += "; below 3x at every size."
        else:
            why += f"; below 3x at {', '.join(below)}."
        rl = runs[max(runs)]
        why += (f" Both modes share the driver, the graph edits (new nodes with model-wide unique"
                f" names, use lists, the escape check) and the match checks themselves"
                f" (runtime/match/GeneratedSupport, which the interpreter calls as well); the"
                f" compiled code only replaces the interpreter's walk over the pattern. In the"
                f" recheck (matching alone, nothing applies) at {int(rl['nodes']):,} nodes"
                f" matching costs {100 * rl['recheck_ms'] / rl['rewrite_ms']:.0f} % of the"
                f" rewrite's time and the interpreter is {rl['recheck_interp_over_compiled']:.1f}x"
                f" the compiled code there, so the part the compiler can speed up is small.")
        verdicts.append(("Compiled rules at least 3x faster than interpreted (rewrite core)",
                         f"{ratios[worst]:.2f}x (worst size)", ok, why))
    if runs:
        largest = max(runs)
        r = runs[largest]
        pct = r["rewrite_pct_of_parse"]
        ok = pct < TARGET_REWRITE_OF_PARSE
        why = (f"at {int(r['nodes']):,} nodes the compiled rewrite takes "
               f"{fmt_ms(r['rewrite_ms'])} ms ({r['rewrite_ns_per_node']:.0f} ns/node), "
               f"ParseFromString {fmt_ms(r['parse_ms'])} ms ({r['parse_ns_per_node']:.0f} ns/node).")
        if not ok:
            why += (f" Matching alone (recheck) is {r['recheck_ns_per_node']:.0f} ns/node; the rest"
                    f" is applying {int(r['rewrites']):,} rewrites: building target nodes and"
                    f" initializers, naming them uniquely model-wide, rewiring use lists.")
            if cli_stats:
                top = sorted(cli_stats["rules"], key=lambda x: -x["seconds"])[:3]
                why += (f" By rule (`--stats` of the {cli_stats['nodes_before']:,}-node command run): "
                        + ", ".join(f"{x['name']} {100 * x['seconds'] / cli_stats['seconds']:.0f} %"
                                    + (f" ({x['seconds'] / x['applied'] * 1e6:,.0f} µs per rewrite)"
                                       if x["applied"] else "") for x in top)
                        + " of the driver's time.")
            why += (" Protobuf parsing costs about a microsecond per node, so 10 % leaves ~100 ns"
                    " per node for matching and rewriting together.")
        verdicts.append(("Rewrite core under 10 % of protobuf parse time (largest model)",
                         f"{pct:.0f} % at {int(r['nodes']):,} nodes", ok, why))
    flat = {n: r for n, r in runs.items() if 1000 <= r["nodes"] <= 1100000}
    if len(flat) >= 2:
        per_node = {n: r["rewrite_ns_per_node"] for n, r in flat.items()}
        lo, hi = min(per_node, key=per_node.get), max(per_node, key=per_node.get)
        spread = per_node[hi] / per_node[lo]
        ok = spread <= TARGET_FLATNESS
        why = (f"compiled rewrite {per_node[lo]:.0f} ns/node at {int(flat[lo]['nodes']):,} nodes, "
               f"{per_node[hi]:.0f} ns/node at {int(flat[hi]['nodes']):,} nodes "
               f"(max/min {spread:.2f}).")
        if max(r["nodes"] for r in flat.values()) < 900000:
            ok = False
            why += " The 10^6-node model was not run (QUICK or LAYERS), so this is not shown."
        elif spread > TARGET_FLATNESS:
            ends = sorted(flat)
            noise = max(abs(r["interp_over_compiled"] - 1) for r in flat.values())
            why += (f" From the smallest to the largest of these sizes the cost goes from"
                    f" {per_node[ends[0]]:.0f} to {per_node[ends[-1]]:.0f} ns/node"
                    f" ({per_node[ends[-1]] / per_node[ends[0]]:.2f}x). Part of the spread is"
                    f" noise: the two modes, which do nearly the same work, differ by up to"
                    f" {100 * noise:.0f} % at one size. The rest is growth with the model, as in"
                    f" infer, import and export: most likely cache misses, as the graph's node,"
                    f" value and use arrays and the model-wide name set outgrow the CPU caches.")
        verdicts.append(("Per-node rewrite cost flat within 25 % from 10^3 to 10^6 nodes",
                         f"max/min {spread:.2f}", ok, why))
    if ort:
        rows = []
        all_ok = True
        for o in ort:
            speedup = o["ort"]["median_cpu"] / o["ours"]["median_cpu"]
            cin, cours, cort = (c["ops"] for c in o["counts"][:3])
            fours, fort = fused_ops(cin, cours), fused_ops(cin, cort)
            ok = speedup >= TARGET_ORT_SPEEDUP and fours >= fort
            all_ok = all_ok and ok
            misses = ([] if speedup >= TARGET_ORT_SPEEDUP else ["slower than 5x"]) + (
                [] if fours >= fort else ["fewer fused ops"])
            rows.append(f"{o['name']}: {speedup:.1f}x, fused ops {fours} vs {fort}"
                        + (f" ({', '.join(misses)})" if misses else " (met)"))
        why = "; ".join(rows) + "."
        if not all_ok:
            small = min(ort, key=lambda o: o["counts"][0]["nodes"])
            si = small["ours"]["median_cpu"] - small["ours_no_shape_inference"]["median_cpu"]
            why += (f" Where onnx-rewrite loses time: on {small['name']}"
                    f" ({small['counts'][0]['nodes']:,} nodes) it spends"
                    f" {fmt_s(small['ours']['median_cpu'])} CPU, of which process start-up"
                    f" (`onnx-rewrite --version`) {fmt_s(startup['median_cpu'])} and shape"
                    f" inference (our symbolic pass) "
                    + (fmt_s(si) if si > 0 else "less than the noise between runs")
                    + ", while ONNX Runtime built its op registry when the binding loaded, which"
                    " is not counted.")
            large = max(ort, key=lambda o: o["counts"][0]["nodes"])
            share = 1 - large["ours_no_shape_inference"]["median_cpu"] / large["ours"]["median_cpu"]
            why += (f" On {large['name']} ({large['counts'][0]['nodes']:,} nodes) shape inference is"
                    f" {100 * share:.0f} % of onnx-rewrite's CPU time (the column without it), and"
                    f" applying rewrites most of the rest (see the phases and the per-rule table).")
            for o in ort:
                cin, cours, cort = (c["ops"] for c in o["counts"][:3])
                if fused_ops(cin, cours) < fused_ops(cin, cort):
                    why += f" ONNX Runtime fuses more nodes on {o['name']}: " + fused_surplus(
                        cin, cours, cort) + "."
        verdicts.append(("File to fused file at least 5x faster than ONNX Runtime, with at least"
                         " as many fused ops", f"{len(ort)} models", all_ok, why))
    def rss(r):
        return r["run"]["max_rss_kb_max"]

    big_kb, small_kb = rss(rss_big), rss(rss_small)
    ok = big_kb <= small_kb * (1 + TARGET_RSS_SLACK)
    read = rss_big["stats"].get("external_bytes_read", 0)
    why = (f"the same {rss_big['stats']['nodes_before']:,}-node graph, every rule: "
           f"{big_kb / small_kb:.2f}x the small model's peak; onnx-rewrite read "
           f"{read / 2**20:,.0f} MiB of the external weights (`external_bytes_read`).")
    if read:
        applied = [r["name"] for r in rss_big["stats"]["rules"] if r["applied"]]
        why += (f" A rule that builds a new weight from existing ones must read them:"
                f" `{rss_big_skip['skip']}` concatenates Q, K and V into one packed initializer"
                f" (rules applied: {', '.join(applied)}); the output file is"
                f" {rss_big['out_bytes'] / 2**20:,.0f} MiB.")
    sk_big, sk_small = rss(rss_big_skip), rss(rss_small_skip)
    sk_ok = sk_big <= sk_small * (1 + TARGET_RSS_SLACK)
    why += (f" Without `{rss_big_skip['skip']}` the peak is {sk_big / 1024:,.0f} MiB against "
            f"{sk_small / 1024:,.0f} MiB ({'independent' if sk_ok else 'still not independent'};"
            f" {rss_big_skip['stats'].get('external_bytes_read', 0) / 2**20:,.0f} MiB read): the"
            f" other rules only check external data with stat and never read it.")
    verdicts.append((
        "Peak RSS independent of the weight size",
        f"{big_kb / 1024:,.0f} MiB with {rss_big['weights_bytes'] / 2**30:.1f} GiB of weights, "
        f"{small_kb / 1024:,.0f} MiB with {rss_small['weights_bytes'] / 2**20:.1f} MiB",
        ok, why))

    # ---- the document ------------------------------------------------------------------
    add("# Benchmarks")
    add("")
    add("Written by `bash tests/bench/run.sh` (do not edit by hand; the text comes from")
    add("`tests/bench/report.py`, and every verdict below is computed from this run's numbers).")
    add("All figures come from one run on the machine below; compare them as ratios, not")
    add("across machines.")
    if quick:
        add("")
        add("**This was a QUICK run (small sizes only): the 10^6-node and several-GB figures are "
            "missing or smaller than the targets ask for.**")
    add("")
    add("```sh")
    add("bash tests/bench/run.sh   # builds build-bench/ (Release), runs everything, writes this file")
    add("```")
    add("")
    add("| | |")
    add("|---|---|")
    add(f"| date | {env['RUN_DATE']} (the whole run took {int(env['RUN_SECONDS']) // 60} min "
        f"{int(env['RUN_SECONDS']) % 60} s) |")
    add(f"| commit | {env['RUN_COMMIT']} |")
    add(f"| CPU | {env['MACHINE_CPU']}, {env['MACHINE_NPROC']} logical CPUs (nproc) |")
    add(f"| RAM | {env['MACHINE_RAM']} |")
    add(f"| compiler | {env['MACHINE_COMPILER']}, CMake Release (-O3 -DNDEBUG) |")
    add(f"| kernel | {env['MACHINE_KERNEL']} |")
    add(f"| ONNX Runtime | onnxruntime-node {env['ORT_VERSION']} on Node.js {env['NODE_VERSION']} |")
    add(f"| load average (1/5/15 min) | {env['LOAD_BEFORE']} before, {env['LOAD_AFTER']} after |")
    if context:
        add(f"| Google Benchmark | Debian's library, a {context.get('library_build_type', '?')} build "
            "(its warning concerns the harness; the code measured is built in Release) |")
    add("")
    add("The machine was shared with other work (see the load average): single timings carry")
    add("noise of tens of percent. That is why the two sides of every ratio are measured in the")
    add("same run, interleaved where possible, and reported as medians.")
    add("")
    add("## Targets")
    add("")
    add("| target | measured | verdict | why |")
    add("|---|---|---|---|")
    for name, measured, ok, why in verdicts:
        add(f"| {name} | {measured} | {verdict(ok)} | {why} |")
    add("")

    add("## Rules measured")
    add("")
    add("Whatever `rules/` and `generated/` held when the run was built. The compiled side is")
    add("`populateGeneratedRules` (rulec's C++ in generated/); the interpreted side is the same")
    add("rules/ files loaded with `dsl/RuleLoader` and run by `runtime/interp` (`interpretRules`),")
    add("as tests/unit/rules does. The command (`onnx-rewrite`, below) runs `builtinRules()`, the")
    add("generated ones. `onnx-rewrite --list-rules`:")
    add("")
    add("```")
    lines.extend(rule_lines)
    add("```")
    add("")

    add("## Models")
    add("")
    add("`tests/bench/TransformerModelGenerator` (`gen_transformer`) builds N pre-LayerNorm")
    add("transformer layers the way the torch.onnx TorchScript exporter writes BERT-style layers:")
    add("LayerNorm decomposed (ReduceMean, Sub, Pow, ReduceMean, Add eps, Sqrt, Div, Mul, Add),")
    add("Q/K/V MatMul + Add, Reshape/Transpose into 4 heads, MatMul, Div by sqrt(d), Add mask,")
    add("Softmax, MatMul, Transpose/Reshape back, output projection, residual Add, a second")
    add("LayerNorm, the FFN with erf GELU `Div(x, 1.4142135) -> Erf -> Add(., 1) -> Mul(x, .) ->")
    add("Mul(., 0.5)`, and the second residual Add: 50 nodes per layer plus a final LayerNorm")
    add("(9 nodes), so 20, 200, 2,000 and 20,000 layers are 10^3 .. 10^6 nodes. Hidden size 64,")
    add("FFN 256, symbolic `batch` and `seq`, opset 17, IR version 8; scalar constants and")
    add("Reshape shapes are initializers, one per use (as torch names them). Weights are either")
    add("external data in one sparse file (shape only, never read: the 10^6-node model fits in")
    add("memory) or, where ONNX Runtime must load them, seeded random floats inline.")
    add("")
    add("The comparison with ONNX Runtime also uses `tests/support/gen_exporter_model --family F")
    add("--exporter E --layers 12` (BERT, GPT-2 and `heads`, the per-head attention GPT of")
    add("Karpathy's gpt.py, as the TorchScript exporter writes them, LLaMA and Phi as the dynamo")
    add("exporter does; the family's default sizes, weights inline), named")
    add("`<family>_<exporter>_<layers>` below.")
    add("")

    if runs:
        add("## Rewrite core: compiled against interpreted")
        add("")
        add("`build-bench/tests/bench/rewrite_benchmark --layers=N` (Google Benchmark; run.sh runs")
        add("one process per size). Each iteration takes two fresh copies of the model through parse,")
        add("shape inference and import, then rewrites one with the compiled rules and the other with")
        add("the interpreted ones (alternating which goes first) and checks that both outputs are")
        add("byte-identical. \"rewrite\" is `runDriver` alone, the rewrite core. \"recheck\" runs the")
        add("driver once more on the rewritten model: every rule is tried on all its candidate roots")
        add("and nothing applies, so it measures matching alone, without building targets or editing")
        add("the graph. All times are CPU times of the benchmark thread (medians over the iterations):")
        add("on this shared machine wall-clock times of a few milliseconds mostly measure the wait for")
        add("a core (the rewrite wall-clock medians are in the raw JSON, `rewrite_wall_ms`).")
        add("")
        add("| layers | nodes | iterations | rewrites | nodes after | rewrite compiled ms "
            "| rewrite interpreted ms | compiled ns/node | interpreted ns/node "
            "| **interpreted / compiled** | recheck compiled ms | recheck interpreted ms "
            "| recheck interpreted / compiled | outputs identical |")
        add("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|")
        for n in sorted(runs):
            r = runs[n]
            same = "yes" if r["identical"] == 1 and r["rewrites"] == r["interp_rewrites"] else "**no**"
            add(f"| {n:,} | {int(r['nodes']):,} | {int(r['iterations'])} | {int(r['rewrites']):,} "
                f"| {int(r['nodes_after']):,} | {fmt_ms(r['rewrite_ms'])} | {fmt_ms(r['interp_rewrite_ms'])} "
                f"| {r['rewrite_ns_per_node']:,.0f} | {r['interp_rewrite_ns_per_node']:,.0f} "
                f"| **{r['interp_over_compiled']:.2f}x** | {fmt_ms(r['recheck_ms'])} "
                f"| {fmt_ms(r['interp_recheck_ms'])} | {r['recheck_interp_over_compiled']:.2f}x | {same} |")
        any_run = next(iter(runs.values()))
        add("")
        add(f"{int(any_run['rules_compiled'])} compiled rules, {int(any_run['rules_interpreted'])} "
            f"interpreted ones (a rule with alternative root ops is one per op), "
            + ("the same names in the same order." if all(r.get("same_rules") == 1 for r in runs.values())
               else "**whose names differ: rules/ and generated/ disagreed (generated/ not "
                    "regenerated?), so the two sides did not run the same rules.**"))
        add(f"Loading and checking the rule files for the interpreter took "
            f"{fmt_ms(any_run['interp_load_ms'])} ms once per process (not in the figures above).")
        add("")

        add("## Phases of the pipeline")
        add("")
        add("CPU times from the same iterations (the compiled copy): parse is `ParseFromString` of the")
        add("serialized model in memory; infer is shape inference (`InferredShapes`, our symbolic pass, on by")
        add("default in the command); import constructs `onnx_rewrite::Model`; rewrite is")
        add("`runDriver`; recheck is explained above; export is `InferredShapes::undo` + `Model::finish`; serialize is")
        add("`SerializeToString`. Peak RSS is the benchmark process's: one model size per process,")
        add("holding the serialized model and two models in turn.")
        add("")
        add("| nodes | " + " | ".join(f"{ph} ms" for ph in PHASES)
            + " | rewrite as % of parse | peak RSS MiB |")
        add("|---:|" + "---:|" * (len(PHASES) + 2))
        for n in sorted(runs):
            r = runs[n]
            add(f"| {int(r['nodes']):,} | " + " | ".join(fmt_ms(r[f'{ph}_ms']) for ph in PHASES)
                + f" | {r['rewrite_pct_of_parse']:.0f} % | {r['peak_rss_mb']:,.0f} |")
        add("")
        add("Nanoseconds per node of each phase (a phase whose figure grows with the size scales")
        add("worse than linearly):")
        add("")
        add("| nodes | " + " | ".join(PHASES) + " |")
        add("|---:|" + "---:|" * len(PHASES))
        for n in sorted(runs):
            r = runs[n]
            add(f"| {int(r['nodes']):,} | "
                + " | ".join(f"{r[f'{ph}_ns_per_node']:,.0f}" for ph in PHASES) + " |")
        add("")

    if ort:
        add("## File to fused file: onnx-rewrite against ONNX Runtime")
        add("")
        add("Both read the same model file (weights inline) and write a fused model file.")
        add("onnx-rewrite: `python3 tests/bench/timecmd.py -- onnx-rewrite -q IN.onnx -o OUT.onnx`,")
        add("the whole process (start-up, load, shape inference, rewrite, save with fsync).")
        add("ONNX Runtime: `node tests/bench/ort_optimize.js IN.onnx OUT.onnx`, only")
        add("`InferenceSession.create` with `graphOptimizationLevel: 'all'` and")
        add("`optimizedModelFilePath` (CPU provider, one intra-op thread), timed inside Node.js: Node's")
        add("start-up and loading the native binding are not counted against ONNX Runtime.")
        add(f"Each side ran {env['ORT_RUNS']} times; medians. The speed-up compares CPU time (user +")
        add("system), which the other work on this machine does not inflate; wall times are shown")
        add("too (they include waiting for a core and for fsync). Fused ops: for each op type listed")
        add("below (any domain), how many more nodes of it the output has than the input, summed.")
        add("")
        add("| model | input nodes | onnx-rewrite CPU | ORT CPU | **speed-up (CPU)** "
            "| onnx-rewrite wall | ORT wall | nodes after (ours / ORT) | **fused ops (ours / ORT)** "
            "| ours without shape inference: CPU, fused ops | ORT CPU + loading the binding |")
        add("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for o in ort:
            cin, cours, cort, cnosi = o["counts"]
            ours, theirs, nosi = o["ours"], o["ort"], o["ours_no_shape_inference"]
            add(f"| {o['name']} | {cin['nodes']:,} | {fmt_s(ours['median_cpu'])} "
                f"| {fmt_s(theirs['median_cpu'])} | **{theirs['median_cpu'] / ours['median_cpu']:.1f}x** "
                f"| {fmt_s(ours['median_wall'])} | {fmt_s(theirs['median_wall'])} "
                f"| {cours['nodes']:,} / {cort['nodes']:,} "
                f"| **{fused_ops(cin['ops'], cours['ops']):,} / {fused_ops(cin['ops'], cort['ops']):,}** "
                f"| {fmt_s(nosi['median_cpu'])}, {fused_ops(cin['ops'], cnosi['ops']):,} "
                f"| {fmt_s(theirs['median_cpu'] + theirs['load_cpu'])} |")
        add("")
        def attention_nodes(ops):
            return sum(n for op, n in ops.items() if op.split("::")[1] in ATTENTION_OPS)

        ours_only = [o["name"] for o in ort
                     if attention_nodes(o["counts"][1]["ops"]) > attention_nodes(o["counts"][2]["ops"])]
        add("\"Nodes after\" differs beyond fusion: ONNX Runtime also folds constants and shape")
        add("computations (`Constant`, `Shape`, `Gather`, `Unsqueeze`, `Concat` chains), which")
        add("onnx-rewrite leaves alone"
            + (f"; onnx-rewrite fuses attention where ONNX Runtime does not ({', '.join(ours_only)})."
               if ours_only else "."))
        add("")
        add("\"ours without shape inference\" is `onnx-rewrite --no-shape-inference` (5 runs, same")
        add("input): how much of onnx-rewrite's time shape inference takes, and what the rules")
        add("still fuse without the shapes it infers. \"ORT CPU + loading the binding\" adds the one-time")
        add("cost of requiring onnxruntime-node (native library, ORT environment), which a script")
        add("optimizing one model also pays; the speed-up and the verdict use session creation alone.")
        add("")
        add(f"onnx-rewrite's fixed cost, `onnx-rewrite --version` under timecmd.py: "
            f"{fmt_s(startup['median_cpu'])} CPU, {fmt_s(startup['median_wall'])} wall (medians).")
        add("")
        add("Op types whose count either side changed (input → onnx-rewrite / ONNX Runtime):")
        add("")
        for o in ort:
            cin, cours, cort = (c["ops"] for c in o["counts"][:3])
            changed = sorted(op for op in set(cin) | set(cours) | set(cort)
                             if not (cin.get(op, 0) == cours.get(op, 0) == cort.get(op, 0)))
            add(f"- **{o['name']}**: " + ", ".join(
                f"`{op}` {cin.get(op, 0)} → {cours.get(op, 0)} / {cort.get(op, 0)}"
                for op in changed) + ".")
        add("")
        add("Fused op types counted: " + ", ".join(f"`{op}`" for op in FUSED_OPS) + ".")
        add("")

    add("## Peak RSS with several GB of weights")
    add("")
    add("`gen_transformer --layers L --hidden H --external` and `onnx-rewrite M.onnx -o F.onnx`")
    add("(then again with `--skip RULE` for the rule that reads weights)")
    add("under `tests/bench/timecmd.py` (peak RSS from wait4). The weights are one sparse file")
    add("(ftruncate: it reads as zeros and occupies no disk blocks); the graphs are the same")
    add("nodes, only the tensor dimensions differ.")
    add("")
    add("| rules | hidden | layers | nodes | weights (external) | disk blocks of the weights "
        "| model file | external bytes read | output file | CPU s | wall s | **peak RSS MiB** |")
    add("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in (rss_big, rss_small, rss_big_skip, rss_small_skip):
        rules = f"all but `{r['skip']}`" if r["skip"] else "all"
        add(f"| {rules} | {r['hidden']} | {r['layers']} | {r['stats']['nodes_before']:,} "
            f"| {r['weights_bytes'] / 2**20:,.1f} MiB | {r['weights_disk_kb']:,} KiB "
            f"| {r['model_bytes'] / 1024:,.0f} KiB "
            f"| {r['stats'].get('external_bytes_read', 0) / 2**20:,.1f} MiB "
            f"| {r['out_bytes'] / 2**20:,.1f} MiB | {r['run']['median_cpu']:.2f} "
            f"| {r['run']['median_wall']:.2f} | **{r['run']['max_rss_kb_max'] / 1024:,.1f}** |")
    add("")

    cli = [n for n in cli_sizes if os.path.exists(os.path.join(results, f"cli_{n}.json"))]
    if cli:
        add("## The command end to end")
        add("")
        add("`onnx-rewrite M.onnx -o F.onnx --stats S.json -q` on `gen_transformer --layers N")
        add("--external` models, under `tests/bench/timecmd.py` (CPU and wall time, peak RSS),")
        add("one run each. This includes process start-up, loading, shape inference, destruction of")
        add("the model at exit and fsync of the output; \"driver s\" is the command's own report")
        add("of the rewrite.")
        add("")
        add("| nodes | CPU s | wall s | max RSS MiB | rewrites | nodes after | driver s (wall) |")
        add("|---:|---:|---:|---:|---:|---:|---:|")
        for n in cli:
            c = load(os.path.join(results, f"cli_{n}.json"))
            s = load(os.path.join(results, f"cli_stats_{n}.json"))
            add(f"| {s['nodes_before']:,} | {c['median_cpu']:.2f} | {c['median_wall']:.2f} "
                f"| {c['max_rss_kb_max'] / 1024:,.0f} "
                f"| {s['rewrites']:,} | {s['nodes_after']:,} | {s['seconds']:.3f} |")
        add("")

    if cli:
        n = max(cli)
        s = load(os.path.join(results, f"cli_stats_{n}.json"))
        total = s["seconds"]
        add(f"Where the driver's time goes on the {s['nodes_before']:,}-node model (the same run's")
        add("`--stats`: wall-clock seconds inside each rule's matchAndRewrite, match and rewrite")
        add(f"together; the driver took {total:.3f} s):")
        add("")
        add("| rule | tried | applied | seconds | share of the driver | µs per attempt | µs per rewrite |")
        add("|---|---:|---:|---:|---:|---:|---:|")
        for r in sorted(s["rules"], key=lambda r: -r["seconds"]):
            if r["tried"] == 0:
                continue
            per_rewrite = f"{r['seconds'] / r['applied'] * 1e6:,.1f}" if r["applied"] else "–"
            add(f"| {r['name']} | {r['tried']:,} | {r['applied']:,} | {r['seconds']:.3f} "
                f"| {100 * r['seconds'] / total:.0f} % | {r['seconds'] / r['tried'] * 1e6:,.2f} "
                f"| {per_rewrite} |")
        add("")
        add(f"External weight bytes read by the rules: {s.get('external_bytes_read', 0):,}.")
        add("")

    with open(doc, "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
