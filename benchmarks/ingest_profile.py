"""Ingest and profile a 1,000,000-job sacct log: gpudecide against a plain pandas baseline.

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python benchmarks/ingest_profile.py [--jobs 1000000] [--keep DIR]

The log has the shape a real `sacct --duplicates --parsable2` prints (a job line plus its
`.batch` and `.extern` steps, some `.0` steps, requeue attempts, cancelled-before-start jobs,
typed GPUs). Each side runs in its own process so peak memory (max RSS) is its own. Both
compute the same core figures, which are compared before any time is reported.
Targets (issue): >= 3x faster than pandas, < 10 s on a 2-core machine, peak < 1.5 GB.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

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


def run_gpudecide(path: Path) -> dict[str, object]:
    """The library as `gpudecide profile LOG --weeks 9 --pool-gpus 512` runs it."""
    from gpudecide.jobs.load import load_logs
    from gpudecide.jobs.profile import ProfileOptions, build_profile

    log = load_logs([path])
    # 9 weeks: the whole generated log (8 weeks of submissions plus the last runs) is in.
    f = build_profile(log, ProfileOptions(weeks=9, pool_gpus=512)).figures
    return {
        "jobs_total": f["jobs_total"],
        "attempts_total": f["attempts_total"],
        "gpu_hours_total": round(float(f["gpu_hours_total"]), 1),
        "peak_concurrent_gpus": f["peak_concurrent_gpus"],
        "never_started": f["never_started"],
    }


def run_pandas(path: Path) -> dict[str, object]:
    """A straightforward pandas version of the same core figures: read_csv + groupby."""
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
    jobs["week"] = (jobs["Start"] - jobs["Start"].min()).dt.days // 7
    jobs[ran].groupby("week")["hours"].sum()
    jobs[ran].groupby("Name" if "Name" in jobs else "JobName").size()
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


def _child(which: str, path: Path) -> None:
    t = time.perf_counter()
    figures = run_gpudecide(path) if which == "gpudecide" else run_pandas(path)
    seconds = time.perf_counter() - t
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "peak_mb": peak_mb, "figures": figures}))


def _measure(which: str, path: Path) -> dict[str, object]:
    res = subprocess.run(
        [sys.executable, __file__, "--child", which, str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(res.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--keep", type=Path, help="folder to keep the generated log in")
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
    ours = _measure("gpudecide", path)
    base = _measure("pandas", path)
    if ours["figures"] != base["figures"]:
        raise SystemExit(
            f"figures differ:\n gpudecide {ours['figures']}\n pandas    {base['figures']}"
        )
    ratio = float(base["seconds"]) / float(ours["seconds"])  # type: ignore[arg-type]
    print(f"same figures: {ours['figures']}")
    print(f"gpudecide: {ours['seconds']:.2f} s, peak {ours['peak_mb']:.0f} MB")
    print(f"pandas   : {base['seconds']:.2f} s, peak {base['peak_mb']:.0f} MB")
    print(
        f"speed-up : {ratio:.1f}x (target >= 3x); gpudecide under 10 s: "
        f"{float(ours['seconds']) < 10}; peak under 1.5 GB: {float(ours['peak_mb']) < 1536}"
    )  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
