#!/usr/bin/env python3
"""Find corpus: does covcon find known, later-fixed thread-safety bugs in published crates?

A measurement, not part of the build (docs/benchmarks.md, "Find corpus"; its history in
docs/benchmarks-history.md). scripts/find-corpus.json lists old published versions with a
known bug (set `bugs`), a negative control (`negative`: a version whose suspicious code is
correct) and the fixed versions (`controls`), each with its oracle, features, the bug's
source, and the trigger: what a report must look like to count as that bug found.

With `--fetch`, it first downloads each entry's exact version into CORPUS/<crate>-<version>
(one scratch cargo project per entry under CORPUS/fetch/ depending on `name = "=VERSION"`,
`cargo fetch`, then a copy of the crate's source out of ~/.cargo/registry/src with an empty
`[workspace]` table so it builds on its own; never into this repository). A yanked version is
pinned with `cargo update --precise`; a copy whose own dependencies only resolve to yanked
versions (lasso 0.4.1: ahash 0.6) gets a Cargo.lock pinning them the same way, and an entry's
`pins` ({dependency: version}) are pinned there too, for a bug that lives in a dependency
(parking_lot 0.8.1's is lock_api 0.3.0's, which cargo would resolve to the fixed 0.3.4). Then,
for each selected entry, one at a time, it runs

    <covcon> covcon --manifest-path CORPUS/<crate>-<version>/Cargo.toml [--features F] \
        [--oracle results] --time-budget <budget>s --seed <seed> --out OUT/<entry> -q

(with `--keep-going` when the entry has `keep_going`, a reason: a known true bug of that version
whose report would otherwise end the type's search before the corpus bug), keeps report.json,
stderr.txt and run.json under OUT/<entry>, and judges each entry:

- found: a violation matches the entry's trigger and was confirmed (`confirmed` absent, or
  repeated at least once); `unconfirmed` when only unconfirmed ones ([0, n]) match;
- tests: the concurrent tests run on the trigger's types (all types: `total`);
- first: tests and seconds (into the type's campaign) to the first matching report;
- every violation that does not match the trigger is listed (type, kind, pair, message),
  marked `known` when it matches one of the entry's `known_true_reports` (a real bug of that
  version that is not the corpus bug; written as triggers are) and `READ` otherwise, so that a
  human reads each one. On a control or the negative control every violation is such a report
  (verdict `clean`, `known only` or `N to read`). `[x86]` marks a miss the corpus says two
  threads on x86 cannot show.

A trigger (find-corpus.json) is {"types": [..], "kinds": [..], "any_of": [CONDITION, ..]}; a
violation matches when its type's path ends with one of `types` (a `Type::method` pair of a
handle counts for `Type` too), its kind is one of `kinds` (any when absent) and one CONDITION
holds. A CONDITION holds when all its fields hold (an empty one always holds):

- "pairs": [[a, b], ..]: the violation's pair, or the pair its test (or original test) was
  built for, is one of these (unordered; `Tree::pop_min` also matches `pop_min`);
- "calls": [m, ..]: some call of either thread of its test (or original test) is one of these
  (a chained call `get_or_create(..).inc()` calls both methods);
- "calls_each_thread": [m, ..]: each of the two threads calls one of these;
- "calls_across": [[a, b], ..]: in the reported (shrunk) test, one thread calls a and the other
  b (a remote `remove` beside the owner's `insert`, whatever pair the test was built for; the
  original test's incidental calls do not count);
- "calls_one_thread": [m, ..]: in the reported (shrunk) test, exactly one thread calls one of
  these (lockfree 0.3.1's lost push needs one pushing thread: two pushing threads show 0.3.2's
  delayed visibility, a different, unfixed behaviour with the same message);
- "messages": [regex, ..]: the message, the message before shrinking or the panic's location
  (`file:line:col`) matches one of them;
- "kinds": as above, for this condition only.

Usage: scripts/find-bench.py --corpus DIR [--fetch] [--covcon BIN] [--set bugs|controls|all]
                             [--only a,b] [--budget SECS] [--seed N] [--strategy S]
                             [--repeat N|auto] [--out DIR] [--json FILE] [--no-run]

`--set bugs` (the default) is the bugs (30) and the negative control; `controls` the fixed
versions; `all` both. `--only` keeps entries whose id (<crate>-<version>) starts with one of the
given prefixes (`--only spin,lasso-0.7`). `--strategy` passes covcon's `--strategy` (to compare
the default with `random` in seconds, one `--seed` and `--out` per run); `--repeat` passes its
`--repeat`. `--no-run` judges what OUT already holds.

For example (session 31's baseline: about 25 min for the bugs, 30 min for the controls):

    python3 scripts/find-bench.py --corpus /work/scratch/find/corpus --fetch --set all --no-run
    python3 scripts/find-bench.py --corpus /work/scratch/find/corpus --covcon BIN --set bugs \
        --seed 1 --budget 60 --out /work/scratch/find-runs/NAME-s1 --json NAME-s1.json
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys

from covcon_run import run_covcon

HERE = os.path.dirname(os.path.abspath(__file__))
REGISTRY = "registry+https://github.com/rust-lang/crates.io-index"


# ---------------------------------------------------------------------------------------------
# Fetching


def cargo(args, cwd, check=True):
    p = subprocess.run(["cargo"] + args, cwd=cwd, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError(f"cargo {' '.join(args)} in {cwd} failed:\n{p.stderr}")
    return p


def scratch_project(path, deps):
    """A library project at `path` depending on `deps` ({alias: toml value})."""
    os.makedirs(os.path.join(path, "src"), exist_ok=True)
    with open(os.path.join(path, "Cargo.toml"), "w") as fh:
        fh.write('[package]\nname = "fetch"\nversion = "0.0.0"\nedition = "2021"\n[workspace]\n[dependencies]\n')
        fh.writelines(f"{alias} = {value}\n" for alias, value in deps.items())
    open(os.path.join(path, "src", "lib.rs"), "a").close()
    lock = os.path.join(path, "Cargo.lock")
    if os.path.exists(lock):
        os.remove(lock)


def pinned_lock(path, pins):
    """A Cargo.lock holding each `pins` name at its (possibly yanked) version."""
    scratch_project(path, {f"pin{i}": f'{{ package = "{n}", version = "*" }}' for i, n in enumerate(pins)})
    cargo(["generate-lockfile", "--quiet"], path)
    for name, version in pins.items():
        cargo(["update", "--quiet", "-p", name, "--precise", version], path)
    return os.path.join(path, "Cargo.lock")


YANKED_REQ = re.compile(r"failed to select a version for the requirement `([\w-]+) = \"([^\"]+)\"`(.*?)location searched", re.S)


def lock_copy(dest, scratch):
    """Makes the copy's Cargo.lock resolve, pinning yanked dependencies where nothing else does."""
    if cargo(["generate-lockfile", "--quiet"], dest, check=False).returncode == 0:
        return []
    pins = {}
    for _ in range(8):
        p = cargo(["metadata", "--format-version", "1"], dest, check=False)
        if p.returncode == 0:
            return sorted(f"{n} {v}" for n, v in pins.items())
        m = YANKED_REQ.search(p.stderr)
        yanked = re.findall(r"version (\S+) is yanked", m.group(3)) if m else []
        if not yanked:
            raise RuntimeError(f"cannot resolve {dest}:\n{p.stderr}")
        # the highest yanked version the requirement names
        pins[m.group(1)] = max(yanked, key=lambda v: [int(x) if x.isdigit() else 0 for x in re.split(r"[.+-]", v)])
        shutil.copy(pinned_lock(os.path.join(scratch, "pins"), pins), os.path.join(dest, "Cargo.lock"))
    raise RuntimeError(f"cannot resolve {dest}: too many yanked dependencies")


def fetch_entry(corpus_dir, entry):
    name, version = entry["crate"], entry["version"]
    dest = os.path.join(corpus_dir, entry["dir"])
    if os.path.exists(os.path.join(dest, "Cargo.toml")):
        print(f"have    {entry['dir']}", file=sys.stderr)
        return
    project = os.path.join(corpus_dir, "fetch", entry["dir"])
    scratch_project(project, {"target": f'{{ package = "{name}", version = "={version}" }}'})
    how = ""
    if cargo(["generate-lockfile", "--quiet"], project, check=False).returncode != 0:
        # a yanked version: resolve any, then pin it
        scratch_project(project, {"target": f'{{ package = "{name}", version = "*" }}'})
        cargo(["generate-lockfile", "--quiet"], project)
        cargo(["update", "--quiet", "-p", name, "--precise", version], project)
        how = " (yanked: pinned with cargo update --precise)"
    cargo(["fetch", "--quiet"], project)
    meta = json.loads(cargo(["metadata", "--format-version", "1"], project).stdout)
    pkg = next(p for p in meta["packages"] if p["name"] == name and p["version"] == version
               and p.get("source") == REGISTRY)
    tmp = dest + ".part"
    if os.path.exists(tmp):
        shutil.rmtree(tmp)
    shutil.copytree(os.path.dirname(pkg["manifest_path"]), tmp)
    with open(os.path.join(tmp, "Cargo.toml"), "a") as fh:
        fh.write("\n[workspace]\n")
    pins = lock_copy(tmp, project)
    if pins:
        how += f" (its Cargo.lock pins yanked {', '.join(pins)})"
    for dep, dep_version in entry.get("pins", {}).items():
        # the bug lives in this version of a dependency (parking_lot 0.8.1: lock_api 0.3.0)
        cargo(["update", "--quiet", "-p", dep, "--precise", dep_version], tmp)
        how += f" (pinned {dep} {dep_version})"
    os.rename(tmp, dest)
    print(f"fetched {entry['dir']}{how}", file=sys.stderr)


# ---------------------------------------------------------------------------------------------
# Running


def run_entry(args, entry):
    d = os.path.join(args.corpus, entry["dir"])
    out = os.path.join(args.out, entry["id"])
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    cmd = [args.covcon, "covcon", "--manifest-path", os.path.join(d, "Cargo.toml")]
    for f in entry.get("features", []):
        cmd += ["--features", f]
    if entry.get("oracle", "panic") == "results":
        cmd += ["--oracle", "results"]
    cmd += ["--time-budget", f"{args.budget}s", "--seed", str(args.seed), "--out", out, "-q"]
    if args.strategy:
        cmd += ["--strategy", args.strategy]
    if args.repeat:
        cmd += ["--repeat", args.repeat]
    if entry.get("keep_going"):
        cmd += ["--keep-going"]
    run_covcon(cmd, out, timeout=args.budget + 1800)


# ---------------------------------------------------------------------------------------------
# Judging


def last(name):
    return name.split("::")[-1]


def type_matches(path, types):
    return any(path == t or path.endswith("::" + t) for t in types)


def same_method(a, b):
    return a == b or last(a) == last(b)


def pair_in(pair, pairs):
    if not pair or len(pair) != 2:
        return False
    x, y = pair
    return any((same_method(x, a) and same_method(y, b)) or (same_method(x, b) and same_method(y, a))
               for a, b in pairs)


def tests_of(v):
    return [t for t in (v.get("test"), v.get("original_test")) if t]


def thread_calls(test):
    """Each thread's calls: a call's method, and the method a chained call was called on the
    result of (`get_or_create(..).inc()` calls `get_or_create` and `Counter::inc`)."""
    out = []
    for thread in test.get("threads", []):
        calls = []
        for c in thread:
            chained = (c.get("chained") or {}).get("from")
            if chained:
                calls.append(chained)
            calls.append(c.get("method", ""))
        out.append(calls)
    return out


def condition_holds(cond, v):
    if "kinds" in cond and v.get("kind") not in cond["kinds"]:
        return False
    if "pairs" in cond:
        candidates = [v.get("methods")] + [t.get("pair") for t in tests_of(v)]
        if not any(pair_in(p, cond["pairs"]) for p in candidates):
            return False
    if "calls" in cond:
        if not any(any(same_method(c, m) for thread in thread_calls(t) for c in thread for m in cond["calls"])
                   for t in tests_of(v)):
            return False
    if "calls_each_thread" in cond:
        want = cond["calls_each_thread"]
        if not any(len(thread_calls(t)) == 2 and all(any(same_method(c, m) for c in thread for m in want)
                                                     for thread in thread_calls(t))
                   for t in tests_of(v)):
            return False
    if "calls_across" in cond:
        def across(t):
            threads = thread_calls(t)
            if len(threads) != 2:
                return False
            calls = lambda thread, m: any(same_method(c, m) for c in thread)
            return any((calls(threads[0], a) and calls(threads[1], b)) or (calls(threads[0], b) and calls(threads[1], a))
                       for a, b in cond["calls_across"])
        if not (v.get("test") and across(v["test"])):
            return False
    if "calls_one_thread" in cond:
        threads = thread_calls(v["test"]) if v.get("test") else []
        callers = [thread for thread in threads
                   if any(same_method(c, m) for c in thread for m in cond["calls_one_thread"])]
        if len(callers) != 1:
            return False
    if "messages" in cond:
        texts = [v.get("message") or "", v.get("original_message") or "", v.get("location") or ""]
        if not any(re.search(rx, text) for rx in cond["messages"] for text in texts):
            return False
    return True


def matches(trigger, type_path, v):
    if not trigger:
        return False
    types = trigger.get("types", [])
    # a handle's methods show on its owner as `Handle::method`
    handles = {m.rsplit("::", 1)[0].split("::")[-1] for m in (v.get("methods") or []) if "::" in m}
    if types and not (type_matches(type_path, types) or handles & {last(t) for t in types}):
        return False
    if "kinds" in trigger and v.get("kind") not in trigger["kinds"]:
        return False
    return any(condition_holds(c, v) for c in trigger.get("any_of", [{}]))


def confirmed(v):
    c = v.get("confirmed")
    return not c or c[0] > 0


def judge(args, entry):
    out = os.path.join(args.out, entry["id"])
    run = json.load(open(os.path.join(out, "run.json"))) if os.path.exists(os.path.join(out, "run.json")) else {}
    path = os.path.join(out, "report.json")
    report = json.load(open(path)) if os.path.exists(path) else None
    stderr = open(os.path.join(out, "stderr.txt")).read() if os.path.exists(os.path.join(out, "stderr.txt")) else ""
    trigger = entry.get("trigger")
    hits, others = [], []
    tests = total = 0
    for t in (report or {}).get("types", []):
        total += t.get("tests_run", 0)
        if trigger and type_matches(t["path"], trigger.get("types", [])):
            tests += t.get("tests_run", 0)
        for v in t.get("violations", []):
            row = {"type": t["path"], "kind": v.get("kind"), "methods": v.get("methods"),
                   "message": v.get("message") or "", "confirmed": v.get("confirmed"),
                   "tests_until_found": v.get("tests_until_found"),
                   "seconds_until_found": v.get("seconds_until_found"),
                   "schedule": v.get("schedule"), "replay": v.get("replay")}
            if matches(trigger, t["path"], v):
                row["ok"] = confirmed(v)
                hits.append(row)
            else:
                known = [k for k in entry.get("known_true_reports", []) if matches(k, t["path"], v)]
                row["known"] = known[0]["what"] if known else None
                others.append(row)
    good = [h for h in hits if h["ok"]]
    first = min(good, key=lambda h: (h["seconds_until_found"] or 0)) if good else None
    if report is None:
        verdict = "no report"
    elif not trigger:
        unknown = [o for o in others if not o["known"]]
        verdict = "clean" if not others else ("known only" if not unknown else f"{len(unknown)} to read")
    elif good:
        verdict = "found"
    elif hits:
        verdict = "unconfirmed"
    else:
        verdict = "not found"
    return {"id": entry["id"], "set": entry["set"], "oracle": entry.get("oracle", "panic"),
            "verdict": verdict, "exit": run.get("exit"), "wall_s": run.get("seconds"),
            "tests": tests, "total_tests": total, "first": first, "matches": hits, "others": others,
            "unreachable": entry.get("unreachable_two_threads_x86", False),
            "built": report is not None and "could not build the harness" not in stderr,
            "stderr_tail": stderr.strip().splitlines()[-3:] if report is None else []}


def show(results):
    print(f"\n{'entry':<28} {'oracle':<7} {'verdict':<12} {'tests':>9} {'first report':>22} {'wall':>7}  exit")
    for r in results:
        f = r["first"]
        first = f"{f['tests_until_found']:,} / {f['seconds_until_found']:.1f} s" if f else ""
        if f and f["confirmed"]:
            first += f" ({f['confirmed'][0]}/{f['confirmed'][1]})"
        tests = f"{r['tests']:,}" if r["tests"] else f"({r['total_tests']:,})"
        verdict = r["verdict"] + (" [x86]" if r["unreachable"] and r["verdict"] != "found" else "")
        print(f"{r['id']:<28} {r['oracle']:<7} {verdict:<12} {tests:>9} {first:>22} {r['wall_s'] or 0:>6.0f}s  {r['exit']}")
        for line in r["stderr_tail"]:
            print(f"    {line[:150]}")
        for h in r["matches"]:
            if h is not f:
                state = "match" if h["ok"] else "match, UNCONFIRMED"
                msg = h["message"].replace("\n", " | ")
                print(f"    {state}: {h['type']} {h['kind']} {' ∥ '.join(h['methods'] or [])} {h['confirmed']}: {msg[:150]!r}")
        for o in r["others"]:
            msg = o["message"].replace("\n", " | ")
            print(f"    {'known' if o['known'] else 'READ'}: {o['type']} {o['kind']} {' ∥ '.join(o['methods'] or [])} "
                  f"{o['confirmed']}: {msg[:150]!r}")
            if o["known"]:
                print(f"        ({o['known'][:140]}{'…' if len(o['known']) > 140 else ''})")
    bugs = [r for r in results if r["set"] == "bugs"]
    if bugs:
        found = [r["id"] for r in bugs if r["verdict"] == "found"]
        print(f"\nbugs found and confirmed: {len(found)} of {len(bugs)}; not found: "
              f"{', '.join(r['id'] for r in bugs if r['verdict'] != 'found') or 'none'}")
    for r in results:
        if r["set"] in ("negative", "controls"):
            unknown = [o for o in r["others"] if not o["known"]]
            if unknown:
                print(f"{r['set']} {r['id']}: {len(unknown)} report(s) that are no known true bug: READ them")
    unknown_bug_reports = sum(1 for r in bugs for o in r["others"] if not o["known"])
    if unknown_bug_reports:
        print(f"bug entries: {unknown_bug_reports} report(s) neither the trigger nor a known true bug: READ them")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--covcon", default=os.path.join(HERE, "..", "target", "release", "cargo-covcon"))
    ap.add_argument("--set", choices=["bugs", "controls", "all"], default="bugs")
    ap.add_argument("--only", default="")
    ap.add_argument("--budget", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--strategy", help="covcon's --strategy (its default when not given)")
    ap.add_argument("--repeat", help="covcon's --repeat (its default when not given)")
    ap.add_argument("--out", default="target/find")
    ap.add_argument("--json")
    ap.add_argument("--no-run", action="store_true")
    ap.add_argument("--fetch", action="store_true")
    args = ap.parse_args()
    corpus = json.load(open(os.path.join(HERE, "find-corpus.json")))["entries"]
    for e in corpus:
        e["dir"] = f"{e['crate']}-{e['version']}"
        e["id"] = e["dir"]
    sets = {"bugs": ("bugs", "negative"), "controls": ("controls",), "all": ("bugs", "negative", "controls")}[args.set]
    only = [o for o in args.only.split(",") if o]
    entries = [e for e in corpus if e["set"] in sets and (not only or any(e["id"].startswith(o) for o in only))]
    if args.fetch:
        os.makedirs(args.corpus, exist_ok=True)
        for e in entries:
            fetch_entry(args.corpus, e)
    if args.no_run and not os.path.isdir(args.out):
        return  # only fetched: nothing to judge
    results = []
    for e in entries:
        if not args.no_run:
            print(f"== {e['id']}", file=sys.stderr, flush=True)
            run_entry(args, e)
        results.append(judge(args, e))
    show(results)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)


if __name__ == "__main__":
    main()
