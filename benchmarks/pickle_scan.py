"""Pickle scan throughput: gpudecide's opcode scan against picklescan, in the same run.

    .venv/bin/python benchmarks/pickle_scan.py --dir /tmp/picklebench             # full size
    .venv/bin/python benchmarks/pickle_scan.py --dir /tmp/picklebench --scale 0.1 # quick run

Two inputs, written once (`--dir` keeps them; `--clean` removes them at the end):

* `numpy.pkl`: a benign checkpoint-like dict of float32 numpy arrays, 400 MB of pickle
  stream (protocol 4: large byte payloads, few opcodes);
* `many_ops.pkl`: a list of small dicts, 10 million opcodes (protocol 4, framed; picklescan
  holds every opcode in a list, so more would measure this machine's memory).

Each tool scans each file in its own process, so its peak memory (VmHWM) is its own;
each is run `--repeat` times and the best time is kept. Throughput is MB of pickle stream
per second. gpudecide: `formats.inspect_file` (what the audit runs on a pickle file);
picklescan 1.0.5: `scanner.scan_file_path`. Both must call the files clean.

Target (issue 15): at least picklescan's speed, memory bounded independent of file size.
gpudecide skips byte payloads (seek) instead of reading them, so on the numpy file its
"MB/s" is bytes of stream accounted for per second, not bytes read; picklescan reads them.
"""

from __future__ import annotations

import argparse
import json
import pickle
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

MB = 1_000_000
ROOT = Path(__file__).resolve().parent.parent

_CHILD = r"""
import json, sys, time

def hwm():
    # Peak RSS of this process image (VmHWM resets at exec; ru_maxrss would carry the
    # parent's peak over from the fork).
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0

sys.path.insert(0, sys.argv[3])
tool, path = sys.argv[1], sys.argv[2]
from pathlib import Path
if tool == "gpudecide":
    from gpudecide.artifacts import formats
else:
    from picklescan import scanner
base = hwm()
start = time.perf_counter()
if tool == "gpudecide":
    p = Path(path)
    report = formats.inspect_file(p.parent, p.name, p.stat().st_size)
    clean = not report.findings
    detail = [f.id for f in report.findings]
else:
    result = scanner.scan_file_path(path)
    clean = result.issues_count == 0 and not result.scan_err
    detail = [result.issues_count, result.scan_err]
seconds = time.perf_counter() - start
peak = hwm()
print(json.dumps({"seconds": seconds, "peak_bytes": peak, "base_bytes": base, "clean": clean,
                  "detail": detail}))
"""


def make_numpy(path: Path, size: int) -> None:
    """A dict of float32 arrays totalling `size` bytes (benign: numpy reconstruction only)."""
    if path.exists() and path.stat().st_size >= size:
        return
    import numpy as np

    tmp = path.with_suffix(".tmp")
    per = 16 * MB
    with open(tmp, "wb") as handle:
        state = {
            f"layer{i}.weight": np.random.default_rng(i).random(per // 4, dtype=np.float32)
            for i in range(max(size // per, 1))
        }
        pickle.dump(state, handle, protocol=4)
    tmp.replace(path)


def make_many_ops(path: Path, ops: int) -> None:
    """About `ops` opcodes: small dicts of ints, floats and short strings."""
    if path.exists():
        return
    rows = ops // 10
    data = [{"i": i, "x": float(i), "tag": "ok"} for i in range(rows)]
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as handle:
        pickle.dump(data, handle, protocol=4)
    tmp.replace(path)


def run_tool(tool: str, path: Path) -> dict[str, Any]:
    """Scan `path` with `tool` in a fresh process; its time, peak memory and verdict."""
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, tool, str(path), str(ROOT / "src")],
        check=True,
        capture_output=True,
        text=True,
    )
    body: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return body


def measure(path: Path, repeat: int) -> dict[str, Any]:
    """Both tools on one file: best time of `repeat`, MB/s, ratio, peak memory."""
    size = path.stat().st_size
    row: dict[str, Any] = {"file": path.name, "mb": round(size / MB, 1)}
    for tool in ("gpudecide", "picklescan"):
        runs = [run_tool(tool, path) for _ in range(repeat)]
        best = min(runs, key=lambda r: r["seconds"])
        row[tool] = {
            "seconds": round(best["seconds"], 3),
            "mb_s": round(size / MB / best["seconds"], 1),
            "peak_mb": round(max(r["peak_bytes"] for r in runs) / MB, 1),
            "growth_mb": round(max(r["peak_bytes"] - r["base_bytes"] for r in runs) / MB, 1),
            "clean": best["clean"],
            "detail": best["detail"],
        }
    row["ratio"] = round(row["gpudecide"]["mb_s"] / row["picklescan"]["mb_s"], 2)
    return row


def main() -> int:
    """Write the inputs, measure, print a table and the JSON figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/picklebench"))
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--clean", action="store_true")
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    numpy_pkl = args.dir / f"numpy-{args.scale}.pkl"
    many_pkl = args.dir / f"many_ops-{args.scale}.pkl"
    make_numpy(numpy_pkl, int(400 * MB * args.scale))
    make_many_ops(many_pkl, int(10_000_000 * args.scale))
    rows = [measure(numpy_pkl, args.repeat), measure(many_pkl, args.repeat)]
    print(f"{'file':22} {'MB':>8} {'gpudecide MB/s':>15} {'picklescan MB/s':>16} {'ratio':>6} "
          f"{'peak RSS MB (g/p)':>18} {'growth MB (g/p)':>16}")  # fmt: skip
    for r in rows:
        g, p = r["gpudecide"], r["picklescan"]
        print(
            f"{r['file']:22} {r['mb']:>8} {g['mb_s']:>15} {p['mb_s']:>16} {r['ratio']:>6} "
            f"{g['peak_mb']:>9}/{p['peak_mb']:<8} {g['growth_mb']:>7}/{p['growth_mb']:<8}"
        )
    print(json.dumps(rows, indent=1))
    if args.clean:
        shutil.rmtree(args.dir)
    return 0 if all(r["gpudecide"]["clean"] and r["ratio"] >= 1 for r in rows) else 1


if __name__ == "__main__":
    started = time.perf_counter()
    code = main()
    print(f"total {time.perf_counter() - started:.1f} s")
    sys.exit(code)
