"""Hash 8 x 512 MB files and one 4 GB file: gpudecide against sha256sum and plain hashlib.

    .venv/bin/python benchmarks/hashing.py --dir /tmp/hashbench            # full size, 8 GB
    .venv/bin/python benchmarks/hashing.py --dir /tmp/hashbench --scale 0.1 # quick run

Needs only the repository and its `.venv` (the script puts `src/` on the path when the
package is not installed). The files are written once with os.urandom (`--dir` keeps them
for the next run; `--clean` removes them at the end). Every side runs in its own process,
so its peak memory (ru_maxrss) is its own; each is run `--repeat` times on a warm page cache
and the best time is kept (the median is printed too). The digests of all sides are compared
before any figure is printed.

Targets (issue 5): multi-file throughput >= 0.9 x (cores x single-core hashlib); one big
file >= 0.95 x single-core hashlib; peak memory < 100 MB.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

MB = 1_000_000
MULTI_FILES = 8
MULTI_SIZE = 512 * MB
BIG_SIZE = 4_000 * MB
WRITE_CHUNK = 16 << 20


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _write(path: Path, size: int) -> None:
    if path.exists() and path.stat().st_size == size:
        return
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as handle:
        left = size
        while left > 0:
            n = min(WRITE_CHUNK, left)
            handle.write(os.urandom(n))
            left -= n
    tmp.replace(path)


def make_files(base: Path, scale: float) -> tuple[list[Path], Path]:
    """The 8 x 512 MB set and the 4 GB file (times `scale`), written only when absent."""
    multi = base / "multi"
    big = base / "big"
    multi.mkdir(parents=True, exist_ok=True)
    big.mkdir(parents=True, exist_ok=True)
    files = []
    for i in range(MULTI_FILES):
        p = multi / f"shard-{i}.bin"
        _write(p, int(MULTI_SIZE * scale))
        files.append(p)
    big_file = big / "model.bin"
    _write(big_file, int(BIG_SIZE * scale))
    return files, big_file


def _warm(paths: list[Path]) -> None:
    for p in paths:
        with open(p, "rb", buffering=0) as handle:
            buf = bytearray(16 << 20)
            while handle.readinto(buf):
                pass


# ---- one side, in its own process --------------------------------------------------------


def _import_gpudecide() -> Any:
    try:
        from gpudecide.artifacts import hashing
    except ImportError:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
        from gpudecide.artifacts import hashing
    return hashing


def _side_gpudecide(paths: list[Path], workers: int) -> dict[str, str]:
    hashing = _import_gpudecide()
    root = paths[0].parent
    tree = hashing.hash_tree(root, workers=workers)
    wanted = {p.name for p in paths}
    return {f.path: f.sha256 for f in tree.files if f.path in wanted}


def _side_hashlib(paths: list[Path]) -> dict[str, str]:
    out = {}
    for p in paths:
        with open(p, "rb") as handle:
            out[p.name] = hashlib.file_digest(handle, "sha256").hexdigest()
    return out


def _side_sha256sum(paths: list[Path]) -> dict[str, str]:
    res = subprocess.run(
        ["sha256sum", *map(str, paths)], check=True, capture_output=True, text=True
    )
    out = {}
    for line in res.stdout.splitlines():
        digest, name = line.split(maxsplit=1)
        out[Path(name.lstrip("*")).name] = digest
    return out


def _vm_hwm_kb() -> int | None:
    """Peak resident set of this process image (VmHWM). ru_maxrss is not used for it: after
    a vfork+exec it still carries the parent's peak, not this process's own."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def worker(side: str, workers: int, paths: list[Path]) -> None:
    """Run one side and print its time, bytes, peak memory and digests as JSON."""
    if side == "gpudecide":
        _import_gpudecide()  # the clock measures hashing, not Python's start-up
    start = time.perf_counter()
    if side == "gpudecide":
        digests = _side_gpudecide(paths, workers)
    elif side == "hashlib":
        digests = _side_hashlib(paths)
    else:
        digests = _side_sha256sum(paths)
    seconds = time.perf_counter() - start
    if side == "sha256sum":
        # an upper bound: Linux folds the forking process's peak into the child's maxrss
        peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    else:
        peak_kb = _vm_hwm_kb() or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "seconds": seconds,
                "bytes": sum(p.stat().st_size for p in paths),
                "peak_mb": peak_kb / 1024,
                "digests": digests,
            }
        )
    )


def run_side(side: str, paths: list[Path], workers: int, repeat: int) -> dict[str, Any]:
    """Best and median of `repeat` runs of one side, each in a fresh process."""
    runs = []
    for _ in range(repeat):
        res = subprocess.run(
            [
                sys.executable,
                __file__,
                "--worker",
                side,
                "--workers",
                str(workers),
                *map(str, paths),
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        runs.append(json.loads(res.stdout))
    best = min(runs, key=lambda r: r["seconds"])
    return {
        "side": side,
        "bytes": best["bytes"],
        "best_s": best["seconds"],
        "median_s": statistics.median(r["seconds"] for r in runs),
        "gb_s": best["bytes"] / best["seconds"] / 1e9,
        "peak_mb": max(r["peak_mb"] for r in runs),
        "digests": best["digests"],
    }


def run_processes(paths: list[Path], procs: int, repeat: int) -> dict[str, Any]:
    """The machine's ceiling: `procs` separate hashlib processes, one share of files each.

    No GIL, no shared interpreter: what the cores deliver right now. When another load holds
    a core, this drops too, and the gpudecide/ceiling ratio still says how close threads get.
    """
    groups = [paths[i::procs] for i in range(procs)]
    groups = [g for g in groups if g]
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        children = [
            subprocess.Popen(
                [sys.executable, __file__, "--worker", "hashlib", *map(str, g)],
                stdout=subprocess.PIPE,
                text=True,
            )
            for g in groups
        ]
        outs = [json.loads(c.communicate()[0]) for c in children]
        wall = time.perf_counter() - start
        digests: dict[str, str] = {}
        for o in outs:
            digests.update(o["digests"])
        runs.append(
            {"seconds": wall, "peak_mb": max(o["peak_mb"] for o in outs), "digests": digests}
        )
    best = min(runs, key=lambda r: r["seconds"])
    total = sum(p.stat().st_size for p in paths)
    return {
        "side": f"{len(groups)} procs",
        "bytes": total,
        "best_s": best["seconds"],
        "median_s": statistics.median(r["seconds"] for r in runs),
        "gb_s": total / best["seconds"] / 1e9,
        "peak_mb": best["peak_mb"],
        "digests": best["digests"],
    }


def _mem_available() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def main() -> None:
    """Generate the files, run every side, compare digests, print the figures."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--dir", type=Path, help="Where the test files are written (kept).")
    ap.add_argument("--scale", type=float, default=1.0, help="File size factor (default 1.0).")
    ap.add_argument("--repeat", type=int, default=3, help="Runs per side (best is kept).")
    ap.add_argument("--workers", type=int, default=0, help="gpudecide threads (default: cores).")
    ap.add_argument("--clean", action="store_true", help="Delete the files at the end.")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("paths", nargs="*", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    cores = _cores()
    workers = args.workers or cores
    if args.worker:
        worker(args.worker, workers, args.paths)
        return
    if args.dir is None:
        ap.error("--dir is required")
    if shutil.which("sha256sum") is None:
        ap.error("sha256sum (coreutils) is not on PATH")
    t0 = time.perf_counter()
    multi, big = make_files(args.dir, args.scale)
    total = sum(p.stat().st_size for p in [*multi, big])
    print(
        f"files: {len(multi)} x {multi[0].stat().st_size / MB:,.0f} MB + 1 x "
        f"{big.stat().st_size / MB:,.0f} MB in {args.dir} ({time.perf_counter() - t0:.1f} s to "
        f"prepare); cores {cores}, gpudecide workers {workers}, python {sys.version.split()[0]}"
    )
    avail = _mem_available()
    if avail is not None and total > 0.8 * avail:
        print(
            f"warning: {total / 1e9:.1f} GB of files, {avail / 1e9:.1f} GB of memory available: "
            "the page cache cannot hold them, figures measure the disk as much as hashing"
        )
    _warm([*multi, big])
    load_before = os.getloadavg()[0]
    results: dict[str, dict[str, Any]] = {}
    for label, paths in (("multi", multi), ("big", [big])):
        for side in ("hashlib", "sha256sum", "gpudecide"):
            results[f"{label}/{side}"] = run_side(side, paths, workers, args.repeat)
        if label == "multi":
            results["multi/procs"] = run_processes(paths, cores, args.repeat)
        digests = {
            s: results[f"{label}/{s}"]["digests"] for s in ("hashlib", "sha256sum", "gpudecide")
        }
        if not digests["hashlib"] == digests["sha256sum"] == digests["gpudecide"]:
            raise SystemExit(f"{label}: digests differ between sides: {digests}")
    print(f"\n{'set':6} {'side':10} {'GB/s':>7} {'best s':>8} {'median s':>9} {'peak MB':>8}")
    for key, r in results.items():
        label, side = key.split("/")
        print(
            f"{label:6} {side:10} {r['gb_s']:7.3f} {r['best_s']:8.3f} {r['median_s']:9.3f} "
            f"{r['peak_mb']:8.1f}"
        )
    single = results["multi/hashlib"]["gb_s"]
    multi_ratio = results["multi/gpudecide"]["gb_s"] / (cores * single)
    big_ratio = results["big/gpudecide"]["gb_s"] / results["big/hashlib"]["gb_s"]
    vs_sum = results["multi/gpudecide"]["gb_s"] / results["multi/sha256sum"]["gb_s"]
    peak = max(results["multi/gpudecide"]["peak_mb"], results["big/gpudecide"]["peak_mb"])
    ceiling = results["multi/gpudecide"]["gb_s"] / results["multi/procs"]["gb_s"]
    print()
    print(
        f"load average (1 min) before / after: {load_before:.2f} / {os.getloadavg()[0]:.2f} "
        f"on {cores} cores: other work on the machine lowers every parallel figure"
    )
    print(
        f"single-core hashlib: {single:.3f} GB/s; "
        f"ideal for {cores} cores: {cores * single:.3f} GB/s"
    )
    print(
        f"multi-file: gpudecide / (cores x hashlib) = {multi_ratio:.3f}  (target >= 0.90) "
        f"{'OK' if multi_ratio >= 0.9 else 'MISSED'}"
    )
    print(f"multi-file: gpudecide / sequential sha256sum = {vs_sum:.2f}x")
    print(
        f"multi-file: gpudecide threads / {cores} hashlib processes (machine ceiling now) = "
        f"{ceiling:.3f}"
    )
    print(
        f"big file:   gpudecide / hashlib = {big_ratio:.3f}  (target >= 0.95) "
        f"{'OK' if big_ratio >= 0.95 else 'MISSED'}"
    )
    print(
        f"peak memory of the gpudecide process: {peak:.1f} MB  (target < 100) "
        f"{'OK' if peak < 100 else 'MISSED'}"
    )
    if args.clean:
        shutil.rmtree(args.dir / "multi", ignore_errors=True)
        shutil.rmtree(args.dir / "big", ignore_errors=True)


if __name__ == "__main__":
    main()
