"""A job for the zygote's tests: reads its spec (JSON) and sleeps, prints, exits as told."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    """Run the job the spec describes: {"sleep": s, "code": c, "say": text}."""
    spec = json.loads(Path(argv[0]).read_text())
    print(spec.get("say", ""), os.environ.get("ZYGOTE_TEST", ""), os.getcwd(), flush=True)
    time.sleep(float(spec.get("sleep", 0)))
    sys.stdout.flush()
    return int(spec.get("code", 0))
