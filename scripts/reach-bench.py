#!/usr/bin/env python3
"""Reach on published crates: how much of what users publish covcon tests with no configuration.

A measurement, not part of the build (docs/benchmarks-history.md, "Reach on published crates"). With
`--fetch`, it first downloads the latest version of each crate of scripts/reach-corpus.json
into CORPUS (a scratch cargo project depending on all of them, `cargo fetch`, then a copy of
each crate's source out of ~/.cargo/registry/src, with an empty `[workspace]` table so it
builds on its own; never into this repository) and says which versions it got: update the
`dir` names in reach-corpus.json when they moved on. Then, for each crate, it runs

    <covcon> covcon --manifest-path CORPUS/<dir>/Cargo.toml [--features ..] \
        [--oracle results] --time-budget <budget>s --seed 1 --out OUT/<dir> -q

one crate at a time, keeps each report.json and stderr under OUT/<dir>, and judges each
expected type:

- found: the report lists it (tested or untested), matched by crate and last path segment;
- tested: it ran tests and at least one method pair ran concurrently (a handle type, one
  only other types hand out, through its owners' tests, where its methods are `Name::m`);
- methods: of the type's public `&self` methods in its inherent impls (counted from the source
  with a brace-matching scan, independent of covcon's analysis), how many appear in a pair
  that ran concurrently;
- setup failures: of its tests, how many failed before the threads started.

Per crate it also says whether the harness built (exit code 3 or a build error means not) and
lists every violation (pair, kind, message) so that a human reads each one: a violation on
published code is a false alarm until someone has shown it is a bug.

Usage: scripts/reach-bench.py --corpus DIR [--fetch] --covcon BIN [--budget SECS]
                              [--oracle panic|results] [--only a,b] [--out DIR] [--json FILE]
                              [--no-run]

`--oracle results` runs the corpus under the results oracle: on correct published code every
wrong result it reports is a false alarm to read, as every panic is.
"""

import argparse
import json
import os
import re
import subprocess
import sys

from covcon_run import run_covcon

HERE = os.path.dirname(os.path.abspath(__file__))


def inherent_methods(src_dir, type_name):
    """Public `&self` methods of `impl .. TypeName<..> { .. }` blocks (not trait impls)."""
    names = set()
    head = re.compile(
        r"impl\s*(<[^{;]*?>)?\s*(?:[\w:]+::)?" + re.escape(type_name) + r"\b(<[^{;]*?>)?\s*(where[^{]*)?\{",
        re.S,
    )
    # `pub` only: `pub(crate)` and `pub(super)` methods are not part of what users call.
    method = re.compile(r"\bpub\s+(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+(\w+)\s*(?:<[^(]*>)?\s*\(\s*&\s*(?:'\w+\s+)?self\b")
    for root, _, files in os.walk(src_dir):
        for f in files:
            if not f.endswith(".rs"):
                continue
            text = open(os.path.join(root, f), encoding="utf-8", errors="replace").read()
            for m in head.finditer(text):
                # skip `impl Trait for Type`: the text before `Type` holds ` for `
                before = text[m.start():m.end()]
                if re.search(r"\bfor\b", before.split(type_name)[0]):
                    continue
                depth, i = 1, m.end()
                while i < len(text) and depth:
                    c = text[i]
                    depth += c == "{"
                    depth -= c == "}"
                    i += 1
                body = text[m.end():i]
                names.update(method.findall(body))
    return names


def fetch(corpus_dir, crates):
    """Downloads the latest version of every crate into corpus_dir/<name>-<version>."""
    names = sorted({re.sub(r"-\d+\.\d+\.\d+.*$", "", c["dir"]) for c in crates})
    project = os.path.join(corpus_dir, "fetch")
    os.makedirs(os.path.join(project, "src"), exist_ok=True)
    with open(os.path.join(project, "Cargo.toml"), "w") as fh:
        fh.write('[package]\nname = "fetch"\nversion = "0.0.0"\nedition = "2021"\n[workspace]\n[dependencies]\n')
        fh.writelines(f'{n} = "*"\n' for n in names)
    open(os.path.join(project, "src", "lib.rs"), "a").close()
    subprocess.run(["cargo", "update", "--quiet"], cwd=project, check=True)
    subprocess.run(["cargo", "fetch", "--quiet"], cwd=project, check=True)
    meta = json.loads(subprocess.run(["cargo", "metadata", "--format-version", "1"], cwd=project,
                                     check=True, capture_output=True, text=True).stdout)
    root = next(p for p in meta["packages"] if p["name"] == "fetch")
    direct = {d["name"]: d for d in root["dependencies"]}
    resolved = {n["id"]: n for n in meta["resolve"]["nodes"]}
    wanted = {dep["pkg"] for dep in resolved[root["id"]]["deps"]}
    import shutil
    for p in meta["packages"]:
        if p["name"] in direct and p["id"] in wanted:
            dest = os.path.join(corpus_dir, f"{p['name']}-{p['version']}")
            if not os.path.exists(dest):
                shutil.copytree(os.path.dirname(p["manifest_path"]), dest)
                with open(os.path.join(dest, "Cargo.toml"), "a") as fh:
                    fh.write("\n[workspace]\n")
            print(f"fetched {p['name']}-{p['version']}", file=sys.stderr)


def run_crate(args, crate):
    d = os.path.join(args.corpus, crate["dir"])
    out = os.path.join(args.out, crate["dir"])
    os.makedirs(out, exist_ok=True)
    cmd = [args.covcon, "covcon", "--manifest-path", os.path.join(d, "Cargo.toml"),
           "--time-budget", f"{args.budget}s", "--seed", "1", "--out", out, "-q"]
    if args.oracle != "panic":
        cmd += ["--oracle", args.oracle]
    for f in crate.get("features", []):
        cmd += ["--features", f]
    run_covcon(cmd, out, timeout=args.budget + 900)


def judge(args, crate):
    d = os.path.join(args.corpus, crate["dir"])
    out = os.path.join(args.out, crate["dir"])
    run = json.load(open(os.path.join(out, "run.json"))) if os.path.exists(os.path.join(out, "run.json")) else {}
    report_path = os.path.join(out, "report.json")
    report = json.load(open(report_path)) if os.path.exists(report_path) else {"types": []}
    crate_name = crate["types"][0].split("::")[0]
    rows = []
    for expected in crate["types"]:
        last = expected.split("::")[-1]
        match = [t for t in report["types"] if t["path"].split("::")[0] == crate_name and t["path"].split("::")[-1] == last]
        exact = [t for t in match if t["path"] == expected]
        t = (exact or match or [None])[0]
        total = inherent_methods(os.path.join(d, "src"), last)
        called = set()
        tests = t.get("tests_run", 0) if t else 0
        if t:
            for p in t.get("pairs", []):
                if p.get("covered", 0) > 0:
                    called.update(p["methods"])
        handle = bool(t) and t.get("untested_kind") == "handle"
        if handle:
            # A handle type is tested through its owners: its methods show there as `Name::m`.
            prefix = last + "::"
            for owner in report["types"]:
                for p in owner.get("pairs", []):
                    if p.get("covered", 0) > 0:
                        called.update(m[len(prefix):] for m in p["methods"] if m.startswith(prefix))
                if any(m.startswith(prefix) for p in owner.get("pairs", []) for m in p["methods"]):
                    tests += owner.get("tests_run", 0)
        tested = bool(t) and tests > 0 and bool(called) and (handle or not t.get("untested"))
        why = ""
        if t is None:
            why = "not found"
        elif not tested:
            why = t.get("untested") or f"{t.get('tests_run', 0)} tests, no pair ran concurrently"
        rows.append({
            "setup_failures": t.get("setup_failures", 0) if t else 0,
            "type": expected, "reported_as": t["path"] if t else None, "found": t is not None,
            "tested": tested, "methods_total": len(total), "methods_called": len(called & total) if total else len(called),
            "extra_called": sorted(called - total), "missing": sorted(total - called), "why": why,
            "tests": tests,
        })
    violations = []
    for t in report["types"]:
        for v in t.get("violations", []):
            violations.append({"type": t["path"], "kind": v.get("kind"), "methods": v.get("methods"),
                               "message": v.get("message"), "reproducer": v.get("reproducer")})
    stderr = open(os.path.join(out, "stderr.txt")).read() if os.path.exists(os.path.join(out, "stderr.txt")) else ""
    built = run.get("exit") not in (3, "timeout", None) and "could not build the harness" not in stderr
    return {"crate": crate["dir"], "exit": run.get("exit"), "seconds": run.get("seconds"),
            "built": built, "types": rows, "violations": violations,
            "reported_types": len(report["types"])}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--covcon", default=os.path.join(HERE, "..", "target", "release", "cargo-covcon"))
    ap.add_argument("--budget", type=int, default=20)
    ap.add_argument("--oracle", choices=["panic", "results"], default="panic")
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default="target/reach")
    ap.add_argument("--json")
    ap.add_argument("--no-run", action="store_true")
    ap.add_argument("--fetch", action="store_true")
    args = ap.parse_args()
    corpus = json.load(open(os.path.join(HERE, "reach-corpus.json")))["crates"]
    only = [o for o in args.only.split(",") if o]
    crates = [c for c in corpus if not only or any(c["dir"].startswith(o) for o in only)]
    if args.fetch:
        fetch(args.corpus, crates)
    results = []
    for c in crates:
        if not args.no_run:
            print(f"== {c['dir']}", file=sys.stderr, flush=True)
            run_crate(args, c)
        results.append(judge(args, c))
    tot = {"types": 0, "found": 0, "tested": 0, "methods": 0, "called": 0, "built": 0, "violations": 0}
    for r in results:
        print(f"\n{r['crate']}: exit {r['exit']}, {r['seconds']}s, harness {'built' if r['built'] else 'NOT built'}, {r['reported_types']} types reported")
        for t in r["types"]:
            mark = "tested" if t["tested"] else ("found " if t["found"] else "MISSED")
            setup = f"  setup failures {t['setup_failures']}" if t["setup_failures"] else ""
            print(f"  {mark} {t['type']:<55} methods {t['methods_called']}/{t['methods_total']}  tests {t['tests']}{setup}  {t['why'][:110]}")
            tot["types"] += 1
            tot["found"] += t["found"]
            tot["tested"] += t["tested"]
            tot["methods"] += t["methods_total"]
            tot["called"] += min(t["methods_called"], t["methods_total"])
        for v in r["violations"]:
            print(f"  VIOLATION {v['type']}: {v['kind']} {v['methods']}: {str(v['message'])[:150]}")
        tot["built"] += r["built"]
        tot["violations"] += len(r["violations"])
    print(f"\ntypes found {tot['found']}/{tot['types']}, tested {tot['tested']}/{tot['types']}, "
          f"methods called {tot['called']}/{tot['methods']}, harnesses built {tot['built']}/{len(results)}, "
          f"violations {tot['violations']}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"totals": tot, "crates": results}, fh, indent=1)


if __name__ == "__main__":
    main()
