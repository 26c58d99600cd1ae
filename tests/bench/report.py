#!/usr/bin/env python3
"""Writes docs/benchmarks.md from the JSON that tests/bench/run.sh collected.

Inputs come from the environment run.sh sets: RESULTS (folder of phases_<layers>.json,
cli_<layers>.json, cli_stats_<layers>.json), DOC (output path), LAYERS_RUN and the
MACHINE_*/RUN_*/LOAD_* descriptions. Only the standard library is used.
"""
import json
import os

PHASES = ["parse", "load_file", "infer", "import", "rewrite", "export", "serialize", "save_file"]
PIPELINE = ["parse", "infer", "import", "rewrite", "export", "serialize"]
NODES_PER_LAYER, NODES_OUTSIDE = 50, 9


def load(path):
    with open(path) as f:
        return json.load(f)


def phases_of(results, layers):
    """{phase: {ms, ns_per_node, nodes, peak_rss_mb, ...}} for one model size."""
    data = load(os.path.join(results, f"phases_{layers}.json"))
    out = {}
    for b in data["benchmarks"]:
        phase = b["name"].split("/")[0]
        unit = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b.get("time_unit", "ns")]
        out[phase] = dict(b, ms=b["real_time"] * unit)
    return data["context"], out


def fmt_ms(ms):
    return f"{ms:.3f}" if ms < 1 else f"{ms:.2f}" if ms < 100 else f"{ms:.0f}"


def main():
    env = os.environ
    results, doc = env["RESULTS"], env["DOC"]
    sizes = [int(x) for x in env["LAYERS_RUN"].split()]
    runs = {n: phases_of(results, n) for n in sizes}
    context = next(iter(runs.values()))[0]

    lines = []
    add = lines.append
    add("# Benchmarks")
    add("")
    add("Written by `bash tests/bench/run.sh` (do not edit by hand; the text comes from")
    add("`tests/bench/report.py`). Numbers are wall-clock times of one run on the machine below;")
    add("they are for spotting what dominates and how it scales, not for comparing machines.")
    add("")
    add("## How")
    add("")
    add("```sh")
    add("bash tests/bench/run.sh" + ("" if sizes == [20, 200, 2000, 20000]
                                     else f'   # LAYERS="{env["LAYERS_RUN"]}"'))
    add("```")
    add("")
    add("| | |")
    add("|---|---|")
    add(f"| date | {env['RUN_DATE']} |")
    add(f"| commit | {env['RUN_COMMIT']} |")
    add(f"| CPU | {env['MACHINE_CPU']}, {env['MACHINE_NPROC']} logical CPUs (nproc) |")
    add(f"| RAM | {env['MACHINE_RAM']} |")
    add(f"| compiler | {env['MACHINE_COMPILER']}, CMake Release (-O3 -DNDEBUG) |")
    add(f"| kernel | {env['MACHINE_KERNEL']} |")
    add(f"| load average (1/5/15 min) | {env['LOAD_BEFORE']} before, {env['LOAD_AFTER']} after |")
    add(f"| Google Benchmark | {context.get('library_build_type', '?')} build of the library, "
        f"{context.get('num_cpus', '?')} CPUs at {context.get('mhz_per_cpu', '?')} MHz reported |")
    add("")
    add("A load average above zero means other work shared the machine; expect noise of")
    add("tens of percent on the small models. \"debug build\" refers to Debian's Google Benchmark")
    add("library (the harness), not to the code measured, which is built in Release.")
    add("")
    add("## Models")
    add("")
    add("`tests/bench/TransformerModelGenerator` builds N pre-LayerNorm transformer layers the way")
    add("the torch.onnx TorchScript exporter writes BERT-style layers: LayerNorm decomposed")
    add("(ReduceMean, Sub, Pow, ReduceMean, Add eps, Sqrt, Div, Mul, Add), Q/K/V MatMul + Add,")
    add("Reshape/Transpose into 4 heads, MatMul, Div by sqrt(d), Add mask, Softmax, MatMul,")
    add("Transpose/Reshape back, output projection, residual Add, a second LayerNorm, the FFN")
    add("with erf GELU `Div(x, 1.4142135) -> Erf -> Add(., 1) -> Mul(x, .) -> Mul(., 0.5)`, and")
    add(f"the second residual Add: {NODES_PER_LAYER} nodes per layer plus a final LayerNorm "
        f"({NODES_OUTSIDE} nodes).")
    add("Hidden size 64, FFN 256, symbolic `batch` and `seq`, opset 17, IR version 8; scalar")
    add("constants and Reshape shapes are initializers, one per use (as torch names them).")
    add("Weights are external data in one sparse file (shape only, never read), so the model")
    add("file holds only the graph and the 10^6-node case fits in memory. The built-in rules")
    add("apply twice per layer: `gelu_erf` (5 nodes -> com.microsoft Gelu), then `bias_gelu`")
    add("(Gelu + the bias Add -> BiasGelu).")
    add("")
    add("## Phases")
    add("")
    add("`tests/bench/rewrite_benchmark` (Google Benchmark, manual timing) times each phase of")
    add("`onnx-rewrite` on a fresh model per iteration; the phases before it run untimed.")
    add("parse: `ParseFromString` of the serialized model in memory; infer: ONNX shape")
    add("inference (`InferredShapes`, on by default in the command; it gives `bias_gelu` its")
    add("static dims); import: constructing `onnx_rewrite::Model`; rewrite: `runDriver` with")
    add("the built-in rules; export: `InferredShapes::undo` + `Model::finish`; save:")
    add("`SerializeToString` in memory. Peak RSS is the benchmark process's, one process per size")
    add("(it holds the serialized model and one model in flight, and includes setup).")
    add("")
    add("| nodes | parse ms | infer ms | import ms | rewrite ms | export ms | save ms "
        "| rewrite ns/node | rewrite as % of parse | peak RSS MiB |")
    add("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in sizes:
        p = runs[n][1]
        nodes = int(p["parse"]["nodes"])
        peak = max(b["peak_rss_mb"] for b in p.values())
        add(f"| {nodes:,} | {fmt_ms(p['parse']['ms'])} | {fmt_ms(p['infer']['ms'])} "
            f"| {fmt_ms(p['import']['ms'])} | {fmt_ms(p['rewrite']['ms'])} "
            f"| {fmt_ms(p['export']['ms'])} | {fmt_ms(p['serialize']['ms'])} "
            f"| {p['rewrite']['ns_per_node']:.0f} "
            f"| {100 * p['rewrite']['ms'] / p['parse']['ms']:.0f} % | {peak:,.0f} |")
    add("")
    add("Time per node (ns) of every phase; a phase whose ns/node grows with the model size")
    add("scales worse than linearly:")
    add("")
    add("| nodes | " + " | ".join(PHASES) + " |")
    add("|---:|" + "---:|" * len(PHASES))
    for n in sizes:
        p = runs[n][1]
        add(f"| {int(p['parse']['nodes']):,} | "
            + " | ".join(f"{p[ph]['ns_per_node']:,.0f}" for ph in PHASES) + " |")
    add("")
    add("load_file is `loadModelFile` (read, parse, check every external data reference with")
    add("stat); save_file is `saveModelFile` into the model's folder (write, fsync, rename).")
    add("")
    add("Share of the in-memory pipeline (parse + infer + import + rewrite + export + save):")
    add("")
    add("| nodes | " + " | ".join(PIPELINE) + " | total ms |")
    add("|---:|" + "---:|" * (len(PIPELINE) + 1))
    for n in sizes:
        p = runs[n][1]
        total = sum(p[ph]["ms"] for ph in PIPELINE)
        add(f"| {int(p['parse']['nodes']):,} | "
            + " | ".join(f"{100 * p[ph]['ms'] / total:.0f} %" for ph in PIPELINE)
            + f" | {fmt_ms(total)} |")
    add("")
    add("## End to end")
    add("")
    add("`onnx-rewrite M.onnx -o F.onnx` on the same models written by `gen_transformer --external`,")
    add("timed with `/usr/bin/time` (wall clock, maximum resident set size). This includes")
    add("process start, destruction of the model at exit, and fsync of the output.")
    add("")
    add("| nodes | wall s | max RSS MiB | rewrites | nodes after | driver s (its own report) |")
    add("|---:|---:|---:|---:|---:|---:|")
    for n in sizes:
        cli = load(os.path.join(results, f"cli_{n}.json"))
        stats = load(os.path.join(results, f"cli_stats_{n}.json"))
        add(f"| {stats['nodes_before']:,} | {cli['seconds']:.2f} | {cli['max_rss_kb'] / 1024:,.0f} "
            f"| {stats['rewrites']:,} | {stats['nodes_after']:,} | {stats['seconds']:.3f} |")
    add("")
    add("## Observations (computed from the numbers above)")
    add("")
    largest = sizes[-1]
    p = runs[largest][1]
    nodes = int(p["parse"]["nodes"])
    ranked = sorted(PIPELINE, key=lambda ph: -p[ph]["ms"])
    add(f"- At {nodes:,} nodes the slowest phases are {ranked[0]} ({fmt_ms(p[ranked[0]]['ms'])} ms), "
        f"{ranked[1]} ({fmt_ms(p[ranked[1]]['ms'])} ms) and {ranked[2]} "
        f"({fmt_ms(p[ranked[2]]['ms'])} ms); the driver (rewrite) takes "
        f"{fmt_ms(p['rewrite']['ms'])} ms.")
    if len(sizes) > 1:
        small = runs[sizes[0]][1]
        for ph in PHASES:
            growth = p[ph]["ns_per_node"] / small[ph]["ns_per_node"]
            if growth >= 2.0:
                add(f"- {ph}: {small[ph]['ns_per_node']:,.0f} ns/node at "
                    f"{int(small[ph]['nodes']):,} nodes, {p[ph]['ns_per_node']:,.0f} ns/node at "
                    f"{nodes:,} ({growth:.1f}x per node; slower than linear, from cache misses "
                    f"or from the algorithm).")
    add("")
    add("## Not measured yet")
    add("")
    add("These numbers cover the hand-written built-in rules (`runtime/builtin`) only. Later")
    add("work will assess, with the same generator and harness:")
    add("")
    add("- rules compiled by `rulec` from `rules/*.yaml` / `rules/*.td` (generated C++) against the")
    add("  same rules run by the Rule IR interpreter (`--rules`), and against the hand-written ones;")
    add("- the full shipped rule library (LayerNorm, SkipLayerNorm, Attention, ...), which will")
    add("  rewrite far more of each layer than the two GELU rules do today;")
    add("- models exported by real exporters (torch.onnx, onnxscript) rather than the generator,")
    add("  and models with inline weights, subgraphs (If/Loop) and local functions.")
    add("")
    with open(doc, "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
