"""Save and load a ~1 GB state dict: gpudecide's checkpoint writer against torch.save/torch.load
and safetensors save_file/load_file, with a `dd` write of the same size as the disk's limit.

    .venv/bin/python benchmarks/checkpoint_io.py --dir /tmp/ckbench             # 1 GB, CPU
    .venv/bin/python benchmarks/checkpoint_io.py --dir /tmp/ckbench --size-gb 0.25
    .venv/bin/python benchmarks/checkpoint_io.py --dir /tmp/ckbench --device cuda  # from GPU memory

Every side runs in its own process (its peak memory, ru_maxrss, is its own; the figure
printed is the peak above the process's RSS once the state dict exists), `--repeat` times,
the best time kept and the range printed. Every write ends with fsync (durable, like
`dd conv=fsync`), so page-cache speed is not mistaken for disk speed. gpudecide's writer
computes the SHA-256 while writing; the other writers do not hash at all, so the export
needs no second read pass only on gpudecide's side. Loads read the files just written (a
warm page cache: the figure is the parser's cost, not the disk's), gpudecide's load
verifying the SHA-256 first as `read_checkpoint` does.

Targets (issue 11): writer >= 1.0x safetensors.save_file and >= 70 % of the dd figure.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

SIDES_SAVE = ("gpudecide", "safetensors", "torch")
SIDES_LOAD = ("gpudecide", "safetensors", "torch")


def _state(size_gb: float, device: str) -> dict[str, Any]:
    import torch

    gen = torch.Generator().manual_seed(0)
    per = 16 << 20  # 16 Mi float32 = 64 MiB per tensor, like the big matrices of a 1B model
    count = max(1, round(size_gb * 1e9 / (per * 4)))
    state = {f"layers.{i}.weight": torch.randn(per, generator=gen) for i in range(count)}
    state["head.bias"] = torch.zeros(4096)
    return {k: v.to(device) for k, v in state.items()}


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _current_mb() -> float:
    """Resident set size now (not the peak so far), from /proc."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return _peak_mb()


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _save(side: str, state: dict[str, Any], path: Path) -> str | None:
    import torch
    from safetensors.torch import save_file

    from gpudecide.portability.checkpoint import write_safetensors

    if side == "gpudecide":
        return write_safetensors(state, path, {"format": "pt"}, fsync=True).sha256
    if side == "safetensors":
        save_file({k: v.contiguous() for k, v in state.items()}, str(path))
    else:
        torch.save(state, path)
    _fsync(path)
    return None


def _load(side: str, path: Path, device: str) -> int:
    import torch
    from safetensors.torch import load_file

    from gpudecide.fsutil import sha256_path

    if side == "gpudecide":
        sha256_path(path)  # verify before loading, as read_checkpoint does
        out = load_file(str(path), device=device)
    elif side == "safetensors":
        out = load_file(str(path), device=device)
    else:
        out = torch.load(path, map_location=device, weights_only=True)
    if device == "cuda":
        torch.cuda.synchronize()
    return len(out)


def one(op: str, side: str, path: Path, size_gb: float, device: str) -> dict[str, Any]:
    """Run one side in this process; print its time, bytes and peak memory as JSON."""
    state = _state(size_gb, device) if op == "save" else None
    base = _current_mb()
    t0 = time.perf_counter()
    digest = _save(side, state or {}, path) if op == "save" else _load(side, path, device)
    seconds = time.perf_counter() - t0
    size = path.stat().st_size
    return {
        "op": op,
        "side": side,
        "seconds": seconds,
        "bytes": size,
        "gbps": size / seconds / 1e9,
        "peak_extra_mb": round(_peak_mb() - base, 1),
        "sha256": digest if isinstance(digest, str) else None,
    }


def dd(path: Path, size_gb: float) -> dict[str, Any]:
    """`dd` of the same size from /dev/zero with conv=fsync: the disk's write limit here."""
    count = max(1, round(size_gb * 1e9 / (16 << 20)))
    t0 = time.perf_counter()
    subprocess.run(
        ["dd", "if=/dev/zero", f"of={path}", "bs=16M", f"count={count}", "conv=fsync"],
        check=True,
        capture_output=True,
    )
    seconds = time.perf_counter() - t0
    size = path.stat().st_size
    path.unlink()
    return {
        "op": "save",
        "side": "dd",
        "seconds": seconds,
        "bytes": size,
        "gbps": size / seconds / 1e9,
    }


def _child(op: str, side: str, path: Path, args: argparse.Namespace) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--one", op, side, str(path), "--size-gb", str(args.size_gb),
           "--device", args.device]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _best(runs: list[dict[str, Any]]) -> dict[str, Any]:
    best = dict(min(runs, key=lambda r: r["seconds"]))
    best["range_gbps"] = [
        round(min(r["gbps"] for r in runs), 3),
        round(max(r["gbps"] for r in runs), 3),
    ]
    best["peak_extra_mb"] = max(r.get("peak_extra_mb", 0.0) for r in runs)
    return best


def main() -> int:
    """Run every side, print a table (or JSON) with GB/s, ratios and peak memory."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, default=Path("/tmp/gpudecide-ckbench"))
    ap.add_argument("--size-gb", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--one", nargs=3, metavar=("OP", "SIDE", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        op, side, path = args.one
        print(json.dumps(one(op, side, Path(path), args.size_gb, args.device)))
        return 0
    args.dir.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict[str, Any]] = {}
    results["save/dd"] = _best([dd(args.dir / "dd.bin", args.size_gb) for _ in range(args.repeat)])
    for side in SIDES_SAVE:
        path = args.dir / f"{side}.bin"
        results[f"save/{side}"] = _best(
            [_child("save", side, path, args) for _ in range(args.repeat)]
        )
    for side in SIDES_LOAD:
        path = args.dir / f"{side}.bin"
        results[f"load/{side}"] = _best(
            [_child("load", side, path, args) for _ in range(args.repeat)]
        )
    for side in SIDES_SAVE:
        (args.dir / f"{side}.bin").unlink(missing_ok=True)
    mine = results["save/gpudecide"]["gbps"]
    ratios = {
        "writer_vs_safetensors": mine / results["save/safetensors"]["gbps"],
        "writer_vs_torch_save": mine / results["save/torch"]["gbps"],
        "writer_vs_dd": mine / results["save/dd"]["gbps"],
        "load_vs_safetensors": results["load/gpudecide"]["gbps"]
        / results["load/safetensors"]["gbps"],
    }
    summary = {"size_gb": args.size_gb, "device": args.device, "repeat": args.repeat,
               "results": results, "ratios": {k: round(v, 3) for k, v in ratios.items()},
               "targets_met": {"writer>=1.0x_safetensors": ratios["writer_vs_safetensors"] >= 1.0,
                               "writer>=0.7x_dd": ratios["writer_vs_dd"] >= 0.7}}  # fmt: skip
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    print(f"{'side':<22}{'GB/s (best)':>12}{'range':>18}{'peak +MB':>10}{'bytes':>16}")
    for name, r in results.items():
        lo, hi = r["range_gbps"]
        print(f"{name:<22}{r['gbps']:>12.3f}{f'{lo:.3f}-{hi:.3f}':>18}"
              f"{r.get('peak_extra_mb', 0.0):>10.0f}{r['bytes']:>16,}")  # fmt: skip
    for k, v in summary["ratios"].items():
        print(f"{k}: {v:.2f}x")
    for k, v in summary["targets_met"].items():
        print(f"target {k}: {'met' if v else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
