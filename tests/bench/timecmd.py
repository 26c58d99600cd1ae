#!/usr/bin/env python3
"""Runs a command several times and prints its wall time, CPU time and peak RSS as JSON.

    python3 tests/bench/timecmd.py [--runs N] -- COMMAND [ARGS...]

Each run's figures come from wait4 on that child alone (CPU = user + system time, peak
RSS = ru_maxrss), with microsecond resolution where /usr/bin/time has ten milliseconds.
Prints {"wall": [...], "cpu": [...], "max_rss_kb": [...], "median_wall", "median_cpu",
"max_rss_kb_max"}; exits 1 if any run fails. tests/bench/run.sh times onnx-rewrite with it.
"""
import json
import os
import subprocess
import sys
import time


def median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def main(argv):
    runs = 1
    if argv[:1] == ["--runs"]:
        runs = int(argv[1])
        argv = argv[2:]
    if argv[:1] != ["--"] or len(argv) < 2 or runs < 1:
        sys.stderr.write("usage: timecmd.py [--runs N] -- COMMAND [ARGS...]\n")
        return 2
    command = argv[1:]
    wall, cpu, rss = [], [], []
    for _ in range(runs):
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        wall.append(time.perf_counter() - start)
        if status != 0:
            sys.stderr.write(f"timecmd: {' '.join(command)}: exit status {status}\n")
            return 1
        cpu.append(usage.ru_utime + usage.ru_stime)
        rss.append(usage.ru_maxrss)  # KiB on Linux
    print(json.dumps({"wall": wall, "cpu": cpu, "max_rss_kb": rss, "median_wall": median(wall),
                      "median_cpu": median(cpu), "max_rss_kb_max": max(rss)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
