"""Ingest and profile a 1,000,000-job sacct log, beside a raw DuckDB scan of the same file.

    .venv/bin/python benchmarks/ingest_profile.py [--jobs 1000000] [--keep DIR] [--runs 3]
        [--reference REV] [--pandas]

The log has the shape a real `sacct --duplicates --parsable2` prints (a job line plus its
`.batch` and `.extern` steps, some `.0` steps, requeue attempts, cancelled-before-start jobs,
typed GPUs). Each measurement runs in its own process, so that its peak memory (max RSS) is
its own; the raw scan and gpudecide take turns, run by run.

- The yardstick: DuckDB's `read_csv` of the file, every column as text, touching three
  columns (distinct job ids, the latest Start, the largest AllocTRES). No parser of the log
  can take less than reading it.
- gpudecide: `load_logs` + `build_profile`, as `gpudecide profile LOG --weeks 9 --pool-gpus
  512` runs them.
- The figures: every figure of the profile is compared with those of the code at `--reference`
  (a git revision, checked out with `git archive` into a temporary folder, run once and kept
  in --keep). Floats may differ by one unit of their last rounded digit (0.001 or less): the
  figures of the reference itself moved by that much from run to run (a parallel float sum).
- `--pandas` adds the plain pandas version of the core figures that this benchmark used to
  compare against.

Targets (issue 25): gpudecide <= 3x the raw scan, peak memory < 1.5 GB, the same figures.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# The commit before issue 25's ingest work: the figures every later version must give.
DEFAULT_REFERENCE = "ab29d8a"
# Figures are rounded to at most 4 digits; a float may move by one unit of the third.
FLOAT_TOLERANCE = 0.0011

FIELDS = (
    "JobID|JobIDRaw|JobName|User|Account|Partition|QOS|Priority|State|ExitCode|Reason|Submit|"
    "Eligible|Start|End|Elapsed|Timelimit|AllocTRES|ReqTRES|NodeList|Comment"
)
NAMES = [
    "ft-llm-lora-train",
    "smoke-llm",
    "eval-llm-mmlu",
    "merge-adapter",
    "quantize-awq",
    "export-gguf",
    "hpo-llm-lr",
    "tokenize-corpus",
    "notebook",
]
STATES = ["COMPLETED"] * 16 + ["FAILED", "CANCELLED by 1001", "TIMEOUT", "NODE_FAIL"]


def generate(path: Path, jobs: int, seed: int = 7) -> None:
    """Write a realistic sacct log of `jobs` jobs (deterministic for a seed)."""
    rng = random.Random(seed)
    t0 = datetime(2026, 1, 5)
    fmt = "%Y-%m-%dT%H:%M:%S"
    with open(path, "w", buffering=1 << 20) as out:
        out.write(FIELDS + "\n")
        span = 8 * 7 * 86400
        for i in range(1, jobs + 1):
            submit = t0 + timedelta(seconds=span * i // jobs)
            gpus = rng.choice((1, 1, 1, 2, 2, 4, 8))
            name = rng.choice(NAMES)
            never = rng.random() < 0.01
            requeue = rng.random() < 0.01
            state = rng.choice(STATES)
            wait = rng.randint(0, 3600)
            dur = rng.randint(60, 12 * 3600)
            start = submit + timedelta(seconds=wait)
            end = start + timedelta(seconds=dur)
            tres = (
                f"billing={gpus * 8},cpu={gpus * 8},gres/gpu:h100={gpus},gres/gpu={gpus},"
                f"mem={gpus * 64000}M,node=1"
            )
            head = f"{i}|{i}|{name}|u{i % 40}|ml|gpu|normal|{4294900000 - i % 1000}"
            limit = "1-00:00:00"
            if never:
                out.write(
                    f"{head}|CANCELLED by 0|0:0|JobHeldUser|{submit:{fmt}}|Unknown|None|"
                    f"{start:{fmt}}|00:00:00|{limit}||{tres}|None assigned|\n"
                )
                continue
            attempts = []
            if requeue:
                mid = start + timedelta(seconds=dur // 3)
                attempts.append((submit, start, mid, "REQUEUED", "None"))
                attempts.append(
                    (
                        mid,
                        mid + timedelta(seconds=11),
                        end + timedelta(seconds=11),
                        state,
                        "BeginTime",
                    )
                )
            else:
                attempts.append((submit, start, end, state, "None"))
            for sub, st, en, stt, why in attempts:
                el = int((en - st).total_seconds())
                elapsed = f"{el // 3600:02d}:{el % 3600 // 60:02d}:{el % 60:02d}"
                node = f"gpu{i % 64:03d}"
                out.write(
                    f"{head}|{stt}|0:0|{why}|{sub:{fmt}}|{sub:{fmt}}|{st:{fmt}}|{en:{fmt}}|"
                    f"{elapsed}|{limit}|{tres}|{tres}|{node}|\n"
                )
                step = f"|{st:{fmt}}|{st:{fmt}}|{st:{fmt}}|{en:{fmt}}|{elapsed}||{tres}||{node}|\n"
                out.write(f"{i}.batch|{i}.batch|batch||ml||||COMPLETED|0:0|{step}")
                out.write(f"{i}.extern|{i}.extern|extern||ml||||COMPLETED|0:0|{step}")
                if gpus >= 2:
                    out.write(f"{i}.0|{i}.0|torchrun||ml||||COMPLETED|0:0|{step}")


def run_gpudecide(path: Path) -> dict[str, Any]:
    """The library as `gpudecide profile LOG --weeks 9 --pool-gpus 512` runs it; every
    figure of the profile."""
    from gpudecide.jobs.load import load_logs
    from gpudecide.jobs.profile import ProfileOptions, build_profile

    log = load_logs([path])
    # 9 weeks: the whole generated log (8 weeks of submissions plus the last runs) is in.
    figures: dict[str, Any] = build_profile(log, ProfileOptions(weeks=9, pool_gpus=512)).figures
    # as the record stores them (messages hold numbers and nested messages)
    return json.loads(json.dumps(figures, default=str))  # type: ignore[no-any-return]


def run_raw_scan(path: Path) -> dict[str, Any]:
    """The yardstick: DuckDB reads the whole file as text and touches three columns."""
    import duckdb

    con = duckdb.connect()
    jobs, start, tres = con.execute(
        "SELECT count(DISTINCT split_part(JobID, '.', 1)), max(Start), max(AllocTRES) "
        "FROM read_csv(?, delim='|', quote='', escape='', header=true, all_varchar=true)",
        [str(path)],
    ).fetchall()[0]
    return {"job_ids": jobs, "latest_start": start, "largest_alloctres": tres}


def run_pandas(path: Path) -> dict[str, Any]:
    """A straightforward pandas version of the core figures: read_csv + groupby."""
    import numpy as np
    import pandas as pd

    df = pd.read_csv(path, sep="|", dtype=str, keep_default_na=False)
    steps = df["JobID"].str.contains(".", regex=False)
    jobs = df[~steps].copy()
    for col in ("Submit", "Start", "End"):
        jobs[col] = pd.to_datetime(
            jobs[col].replace({"Unknown": None, "None": None}),
            format="%Y-%m-%dT%H:%M:%S",
            errors="coerce",
        )
    jobs["gpus"] = pd.to_numeric(
        jobs["AllocTRES"].str.extract(r"gres/gpu=(\d+)")[0], errors="coerce"
    )
    jobs["hours"] = jobs["gpus"] * (jobs["End"] - jobs["Start"]).dt.total_seconds() / 3600
    ran = jobs["gpus"].notna() & jobs["Start"].notna()
    per_job = jobs[ran].groupby("JobID").agg(attempts=("JobID", "size"), hours=("hours", "sum"))
    never = jobs[~ran].groupby("JobID").size()
    r = jobs[ran]
    times = np.concatenate([r["Start"].to_numpy(), r["End"].to_numpy()])
    deltas = np.concatenate([r["gpus"].to_numpy(), -r["gpus"].to_numpy()])
    order = np.lexsort((deltas, times))
    peak = int(np.cumsum(deltas[order]).max())
    return {
        "jobs_total": len(per_job),
        "attempts_total": int(per_job["attempts"].sum()),
        "gpu_hours_total": round(float(per_job["hours"].sum()), 1),
        "peak_concurrent_gpus": peak,
        "never_started": len(never),
    }


_RUNNERS = {"gpudecide": run_gpudecide, "raw": run_raw_scan, "pandas": run_pandas}


# What each side imports before its clock starts: the figure is the work, not the start-up.
_IMPORTS = {
    "gpudecide": ("gpudecide.jobs.load", "gpudecide.jobs.profile"),
    "raw": ("duckdb",),
    "pandas": ("numpy", "pandas"),
}


def _child(which: str, path: Path) -> None:
    for module in _IMPORTS[which]:
        importlib.import_module(module)
    t = time.perf_counter()
    figures = _RUNNERS[which](path)
    seconds = time.perf_counter() - t
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "peak_mb": peak_mb, "figures": figures}))


def _measure(which: str, path: Path, src: Path | None = None) -> dict[str, Any]:
    """One run in a fresh process; `src`: the source tree to import gpudecide from."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    res = subprocess.run(
        [sys.executable, __file__, "--child", which, str(path)],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    if res.returncode:
        raise SystemExit(f"{which} run failed:\n{res.stderr}")
    return json.loads(res.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _reference(rev: str, path: Path, folder: Path) -> dict[str, Any]:
    """The profile figures of the code at `rev` (computed once, kept next to the log)."""
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short=12", rev],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    kept = folder / f"{path.stem}.figures-{commit}.json"
    if kept.exists():
        return json.loads(kept.read_text())  # type: ignore[no-any-return]
    with tempfile.TemporaryDirectory(prefix="gpudecide-ref-") as tmp:
        archive = Path(tmp) / "src.tar"
        subprocess.run(
            ["git", "-C", str(ROOT), "archive", "-o", str(archive), commit, "src"], check=True
        )
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        print(f"computing the reference figures with {commit} (once) ...", flush=True)
        figures = _measure("gpudecide", path, Path(tmp) / "src")["figures"]
    kept.write_text(json.dumps(figures, sort_keys=True))
    return figures  # type: ignore[no-any-return]


def _differences(ours: Any, ref: Any, where: str = "") -> tuple[list[str], float]:
    """Where two figure trees differ beyond FLOAT_TOLERANCE, and the largest float gap."""
    if isinstance(ours, dict) and isinstance(ref, dict):
        out: list[str] = []
        gap = 0.0
        for key in sorted(ours.keys() | ref.keys()):
            if key not in ours or key not in ref:
                out.append(f"{where}.{key}: only in {'ours' if key in ours else 'reference'}")
                continue
            diffs, g = _differences(ours[key], ref[key], f"{where}.{key}")
            out += diffs
            gap = max(gap, g)
        return out, gap
    if isinstance(ours, list) and isinstance(ref, list) and len(ours) == len(ref):
        out, gap = [], 0.0
        for i, (a, b) in enumerate(zip(ours, ref, strict=True)):
            diffs, g = _differences(a, b, f"{where}[{i}]")
            out += diffs
            gap = max(gap, g)
        return out, gap
    numbers = (int, float)
    if isinstance(ours, float | int) and isinstance(ref, numbers) and not isinstance(ours, bool):
        gap = abs(float(ours) - float(ref))
        if type(ours) is not type(ref) or gap > (FLOAT_TOLERANCE if isinstance(ours, float) else 0):
            return [f"{where}: {ours!r} != {ref!r}"], gap
        return [], gap
    return ([] if ours == ref else [f"{where}: {ours!r} != {ref!r}"]), 0.0


def _span(values: list[float], unit: str = "") -> str:
    return (
        f"{min(values):.2f}-{max(values):.2f}{unit}"
        if len(values) > 1
        else f"{values[0]:.2f}{unit}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--keep", type=Path, help="folder to keep the generated log in")
    parser.add_argument("--runs", type=int, default=3, help="runs of each side (default 3)")
    parser.add_argument(
        "--reference",
        default=DEFAULT_REFERENCE,
        help=f"git revision whose figures ours must equal (default {DEFAULT_REFERENCE})",
    )
    parser.add_argument("--pandas", action="store_true", help="also time the pandas baseline")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], Path(args.child[1]))
        return
    folder = args.keep or Path(tempfile.mkdtemp(prefix="gpudecide-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"sacct-{args.jobs}.txt"
    if not path.exists():
        t = time.perf_counter()
        generate(path, args.jobs)
        print(
            f"generated {path} ({path.stat().st_size / 1e6:.0f} MB) in "
            f"{time.perf_counter() - t:.0f} s"
        )
    with open(path, "rb") as handle:
        lines = sum(1 for _ in handle) - 1
    print(
        f"machine: {os.cpu_count()} cores; log {path.stat().st_size / 1e6:.0f} MB, {lines:,} lines"
    )
    reference = _reference(args.reference, path, folder)
    ours: list[dict[str, Any]] = []
    raw: list[dict[str, Any]] = []
    for _ in range(args.runs):
        raw.append(_measure("raw", path))
        ours.append(_measure("gpudecide", path))
    gap = 0.0
    for run in ours:
        diffs, run_gap = _differences(run["figures"], reference)
        gap = max(gap, run_gap)
        if diffs:
            raise SystemExit(f"figures differ from {args.reference}:\n  " + "\n  ".join(diffs[:20]))
    print(
        f"same figures as {args.reference}: all {len(reference)} top-level figures, "
        f"largest float gap {gap:.4f}; e.g. {reference['jobs_total']:,} GPU jobs, "
        f"{reference['gpu_hours_total']:,} GPU-hours, peak {reference['peak_concurrent_gpus']} GPUs"
    )
    ratios = [o["seconds"] / r["seconds"] for o, r in zip(ours, raw, strict=True)]
    peaks = [o["peak_mb"] for o in ours]
    print(
        f"raw DuckDB scan : {_span([r['seconds'] for r in raw], ' s')}, "
        f"peak {max(r['peak_mb'] for r in raw):.0f} MB"
    )
    print(
        f"gpudecide       : {_span([o['seconds'] for o in ours], ' s')}, peak {max(peaks):.0f} MB"
    )
    print(
        f"ratio (run by run): {_span(ratios, 'x')} the raw scan (target <= 3x: "
        f"{max(ratios) <= 3}); peak under 1.5 GB: {max(peaks) < 1536}"
    )
    if args.pandas:
        base = _measure("pandas", path)
        core = {k: reference[k] for k in base["figures"]}
        core["gpu_hours_total"] = round(float(core["gpu_hours_total"]), 1)
        if core != base["figures"]:
            raise SystemExit(f"pandas figures differ:\n ours   {core}\n pandas {base['figures']}")
        print(
            f"pandas          : {base['seconds']:.2f} s, peak {base['peak_mb']:.0f} MB "
            f"({base['seconds'] / min(o['seconds'] for o in ours):.1f}x gpudecide's best run)"
        )


if __name__ == "__main__":
    main()
