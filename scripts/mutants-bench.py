#!/usr/bin/env python3
"""Mutants on published crates (issue 32 item 5): how many of the concurrency mutants of
correct, published code covcon judges and catches, beside the crates' own test suites.

A measurement, not part of the build (docs/benchmarks.md, "Mutants"). For each crate of
scripts/reach-corpus.json (fetched into CORPUS by `reach-bench.py --fetch`), one at a time:

    <covcon> covcon mutants --manifest-path CORPUS/<dir>/Cargo.toml [--features ..] \
        --budget <budget>s --seed <seed> [--max-tests N] [--compare "<cmd>"] -q

then copies `CORPUS/<dir>/target/covcon/mutants.out` to OUT/<dir> (with `stderr.txt` and
`run.json`) and prints one row per crate: mutants made, unviable, equivalent, skipped, judged
(caught + missed + timeout), caught by covcon (a timeout counts as caught, as the score does),
covcon's score over the judged ones, and with `--compare` the crate's own command's catches
over the mutants it judged. `--report-only` reads OUT again without running anything.

Every missed mutant is a question to read (`OUT/<dir>/missed.txt` has each diff): a gap in
what covcon generates or schedules, or a mutant no run can tell from the original.

Usage: scripts/mutants-bench.py --corpus DIR --covcon BIN [--budget SECS] [--seed N]
                                [--max-tests N] [--compare CMD] [--only a,b] --out DIR
                                [--json FILE] [--report-only] [--keep-target]
"""

import argparse
import json
import os
import shutil
import sys

from covcon_run import run_covcon

HERE = os.path.dirname(os.path.abspath(__file__))


def run_crate(args, crate):
    d = os.path.join(args.corpus, crate["dir"])
    out = os.path.join(args.out, crate["dir"])
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    cmd = [args.covcon, "covcon", "mutants", "--manifest-path", os.path.join(d, "Cargo.toml"),
           "--budget", f"{args.budget}s", "--seed", str(args.seed), "-q"]
    if args.max_tests:
        cmd += ["--max-tests", str(args.max_tests)]
    if args.compare:
        cmd += ["--compare", args.compare]
    for f in crate.get("features", []):
        cmd += ["--features", f]
    run_covcon(cmd, out, timeout=args.crate_timeout)
    produced = os.path.join(d, "target", "covcon", "mutants.out")
    if os.path.isdir(produced):
        shutil.copytree(produced, os.path.join(out, "mutants.out"))
    if not args.keep_target:
        # A mutants build of one crate takes about a gigabyte; 21 of them fill a small disk.
        shutil.rmtree(os.path.join(d, "target"), ignore_errors=True)


def judge(args, crate):
    out = os.path.join(args.out, crate["dir"])
    run = {}
    if os.path.exists(os.path.join(out, "run.json")):
        run = json.load(open(os.path.join(out, "run.json")))
    path = os.path.join(out, "mutants.out", "outcomes.json")
    row = {"crate": crate["dir"], "exit": run.get("exit"), "wall_s": run.get("seconds")}
    if not os.path.exists(path):
        row["error"] = "no outcomes.json"
        return row
    outcomes = json.load(open(path))
    counts = {}
    for m in outcomes.get("mutants", outcomes.get("outcomes", [])):
        counts[m["outcome"]] = counts.get(m["outcome"], 0) + 1
    caught = counts.get("caught", 0) + counts.get("timeout", 0)
    judged = caught + counts.get("missed", 0)
    row.update({
        "mutants": sum(counts.values()),
        "unviable": counts.get("unviable", 0),
        "equivalent": counts.get("equivalent", 0),
        "skipped": counts.get("skipped", 0),
        "judged": judged,
        "caught": caught,
        "score": round(100.0 * caught / judged, 1) if judged else None,
    })
    compare = outcomes.get("compare")
    if compare:
        theirs = [o for o in compare.get("outcomes", []) if o.get("outcome") in ("caught", "missed", "timeout")]
        row["suite_judged"] = len(theirs)
        row["suite_caught"] = sum(1 for o in theirs if o["outcome"] in ("caught", "timeout"))
        for group in ("both", "covcon_only", "command_only", "neither"):
            row[group] = len(compare.get(group, []))
    return row


def table(rows, compare):
    head = "| crate | mutants | unviable | equivalent | skipped | judged | caught | score | wall |"
    rule = "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    if compare:
        head += " suite caught / judged | covcon only / suite only / both / neither |"
        rule += "---:|---|"
    lines = [head, rule]
    total = {k: 0 for k in ("mutants", "unviable", "equivalent", "skipped", "judged", "caught",
                            "suite_judged", "suite_caught", "both", "covcon_only", "command_only", "neither")}
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['crate']} | {r['error']} (exit {r['exit']}) | | | | | | | |")
            continue
        for k in total:
            total[k] += r.get(k, 0) or 0
        score = "—" if r["score"] is None else f"{r['score']} %"
        lines.append(row(r["crate"], r, score, f"{r['wall_s']} s", compare))
    score = f"{100.0 * total['caught'] / total['judged']:.1f} %" if total["judged"] else "—"
    lines.append(row("**all**", total, f"**{score}**", "", compare))
    return "\n".join(lines)


def row(name, d, score, wall, compare):
    """One line of the table: a crate's counts (`d`), or the totals'."""
    line = (f"| {name} | {d['mutants']} | {d['unviable']} | {d['equivalent']} | {d['skipped']} | "
            f"{d['judged']} | {d['caught']} | {score} | {wall} |")
    if compare:
        line += (f" {d.get('suite_caught', '—')} / {d.get('suite_judged', '—')} | {d.get('covcon_only', 0)} / "
                 f"{d.get('command_only', 0)} / {d.get('both', 0)} / {d.get('neither', 0)} |")
    return line


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--covcon", default="cargo-covcon")
    ap.add_argument("--budget", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-tests", type=int)
    ap.add_argument("--compare")
    ap.add_argument("--only", help="comma-separated crate dirs (or prefixes of them)")
    ap.add_argument("--crate-timeout", type=int, default=3600)
    ap.add_argument("--out", required=True)
    ap.add_argument("--json")
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--keep-target", action="store_true", help="keep each crate's target/ (deleted by default)")
    args = ap.parse_args()
    corpus = json.load(open(os.path.join(HERE, "reach-corpus.json")))["crates"]
    if args.only:
        wanted = args.only.split(",")
        corpus = [c for c in corpus if any(c["dir"].startswith(w) for w in wanted)]
    rows = []
    for crate in corpus:
        if not args.report_only:
            print(f"mutants of {crate['dir']} ...", file=sys.stderr, flush=True)
            run_crate(args, crate)
        rows.append(judge(args, crate))
        print(rows[-1], file=sys.stderr, flush=True)
    print(table(rows, bool(args.compare)))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
