"""Scan a generated training log for credentials: lines per second of `check secrets`.

    .venv/bin/python benchmarks/secrets_scan.py                 # 50 000 lines, 3 runs
    .venv/bin/python benchmarks/secrets_scan.py --lines 200000

The log looks like a trainer's output (step, loss, learning rate, checkpoint paths) with one
fake AWS access key id planted in the middle; the run fails unless exactly that line is
found. detect-secrets runs its whole default plugin set on every line, so the figure is the
cost of that set on this machine; the best of `--repeat` runs is printed, and the median.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

from gpudecide.governance import secrets  # noqa: E402

FAKE_KEY = "AKIA" + "Z7Q3JX4M5N6P7R2T"


def write_log(path: Path, lines: int) -> int:
    """Write the log; return the 1-based line number of the planted key."""
    planted = lines // 2 + 1
    with path.open("w", encoding="utf-8") as out:
        for i in range(1, lines + 1):
            if i == planted:
                out.write(f"2026-06-01 10:00:00 env AWS_ACCESS_KEY_ID={FAKE_KEY}\n")
            else:
                out.write(
                    f"2026-06-01 10:{i % 60:02d}:00 step={i} loss={1 + 1 / i:.4f} lr=2e-5 "
                    f"ckpt=/scratch/run-7/ckpt-{i // 500}\n"
                )
    return planted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "train.log"
        planted = write_log(log, args.lines)
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            result = secrets.scan([log])
            times.append(time.perf_counter() - start)
            found = [f.params["line"] for f in result.findings]
            if found != [planted]:
                raise SystemExit(f"expected the key at line {planted}, found {found}")
    best = min(times)
    print(
        json.dumps(
            {
                "lines": args.lines,
                "best_s": round(best, 2),
                "median_s": round(statistics.median(times), 2),
                "lines_per_s": round(args.lines / best),
            }
        )
    )


if __name__ == "__main__":
    main()
