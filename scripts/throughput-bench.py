#!/usr/bin/env python3
"""Runs per second of covcon campaigns, beside the floor measured in the same invocation.

    scripts/throughput-bench.py --covcon BIN [--budget 20] [--seed 1] [--oracles panic,results]
                                [--repeat N|auto] [--corpus scripts/reach-corpus.json]
                                [--out DIR] [--json FILE] WORKSPACE...

Each WORKSPACE (a directory with a Cargo.toml: a fresh copy of fixtures/, a published crate
fetched by reach-bench.py) gets one campaign per oracle, `BIN covcon --oracle O --time-budget
BUDGET --seed SEED` (and `--repeat` when given: covcon's default otherwise, 1 under the panic
oracle and `auto` under the results oracle), one after the other. From its report.json: the
concurrent runs (`runs`: the campaign's, exploring, confirming, shrinking) and tests of every
tested type, over the seconds its types took (`seconds`, the harness build left out). The
floor is `BIN covcon bench --floor` (two warm threads, one trivial call each), measured before
the first campaign and after the last, the best kept; the table gives each campaign's runs
per second and the floor's multiple of it. Features come from --corpus (reach-corpus.json's
`features` by `dir`).
Nothing is written into the workspaces but their target/ directories.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile


def floor(covcon):
    out = subprocess.run([covcon, "covcon", "bench", "--floor"], capture_output=True, text=True, check=True)
    m = re.search(r"floor: (\d+) ns per run", out.stdout)
    if not m:
        sys.exit(f"cannot read the floor from: {out.stdout!r}")
    return int(m.group(1))


def features_of(corpus, workspace):
    if not corpus:
        return []
    name = os.path.basename(os.path.normpath(workspace))
    for c in json.load(open(corpus))["crates"]:
        if c["dir"] == name and c.get("features"):
            return ["--features", ",".join(c["features"])]
    return []


def campaign(args, workspace, oracle, out):
    command = [args.covcon, "covcon", "--manifest-path", os.path.join(workspace, "Cargo.toml"),
               "--oracle", oracle, "--time-budget", f"{args.budget}s", "--seed", str(args.seed),
               "--out", out, "-q"] + features_of(args.corpus, workspace)
    if args.repeat:
        command += ["--repeat", args.repeat]
    run = subprocess.run(command, capture_output=True, text=True)
    report_path = os.path.join(out, "report.json")
    if not os.path.exists(report_path):
        return {"error": f"exit {run.returncode}: {run.stderr.strip()[-300:]}"}
    report = json.load(open(report_path))
    tested = [t for t in report["types"] if not t.get("untested")]
    runs = sum(t.get("runs", t.get("tests_run", 0)) for t in tested)
    tests = sum(t.get("tests_run", 0) for t in tested)
    seconds = sum(t.get("seconds", 0.0) for t in tested)
    return {"exit": run.returncode, "types": len(tested), "tests": tests, "runs": runs,
            "seconds": seconds, "runs_per_s": runs / seconds if seconds else None}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--covcon", required=True, help="a cargo-covcon binary")
    p.add_argument("--budget", type=int, default=20, help="seconds per campaign")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--oracles", default="panic,results")
    p.add_argument("--repeat",
                   help="covcon's --repeat for every campaign (its default when not given)")
    p.add_argument("--corpus", help="reach-corpus.json, for features")
    p.add_argument("--out", help="where the campaigns' reports go (default: a temporary directory)")
    p.add_argument("--json", help="also write the figures here")
    p.add_argument("workspaces", nargs="+")
    args = p.parse_args()
    args.covcon = os.path.abspath(args.covcon)
    out_root = args.out or tempfile.mkdtemp(prefix="covcon-throughput-")
    floors = [floor(args.covcon)]
    rows = []
    for workspace in args.workspaces:
        name = os.path.basename(os.path.normpath(os.path.abspath(workspace)))
        for oracle in args.oracles.split(","):
            out = os.path.abspath(os.path.join(out_root, f"{name}-{oracle}"))
            print(f"{name} ({oracle})...", file=sys.stderr, flush=True)
            rows.append({"workspace": name, "oracle": oracle, **campaign(args, workspace, oracle, out)})
    floors.append(floor(args.covcon))
    floor_ns = min(floors)
    floor_rate = 1e9 / floor_ns
    print(f"floor: {floor_ns} ns per run = {floor_rate:,.0f} runs/s (best of {floors} ns)")
    repeat = f", --repeat {args.repeat}" if args.repeat else ""
    print(f"budget {args.budget} s per campaign, seed {args.seed}{repeat}\n")
    print("| workspace | oracle | types | tests | runs | seconds | runs/s | floor / runs/s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        if "error" in r:
            print(f"| {r['workspace']} | {r['oracle']} | {r['error']} | | | | | |")
            continue
        rate = r["runs_per_s"]
        ratio = f"{floor_rate / rate:,.0f}x" if rate else "-"
        rate_text = f"{rate:,.0f}" if rate else "-"
        print(f"| {r['workspace']} | {r['oracle']} | {r['types']} | {r['tests']:,} | {r['runs']:,} "
              f"| {r['seconds']:.1f} | {rate_text} | {ratio} |")
    if args.json:
        json.dump({"floor_ns": floor_ns, "floors_ns": floors, "budget_s": args.budget,
                   "seed": args.seed, "repeat": args.repeat, "rows": rows},
                  open(args.json, "w"), indent=2)


if __name__ == "__main__":
    main()
