"""Running one covcon campaign for the corpus scripts (reach-bench.py, find-bench.py)."""
import json
import os
import subprocess
import time


def run_covcon(cmd, out, timeout):
    """Runs `cmd` (a covcon command line writing its report into `out`), at most `timeout`
    seconds, and keeps its stderr (`stderr.txt`) and exit code, seconds and command line
    (`run.json`) in `out`. The exit code is "timeout" when it ran out of time."""
    start = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           env=dict(os.environ, NO_COLOR="1"))
        code, err = p.returncode, p.stderr
    except subprocess.TimeoutExpired as e:
        code = "timeout"
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
    with open(os.path.join(out, "stderr.txt"), "w") as fh:
        fh.write(err)
    with open(os.path.join(out, "run.json"), "w") as fh:
        json.dump({"exit": code, "seconds": round(time.time() - start, 1), "cmd": cmd}, fh)
