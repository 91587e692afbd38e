"""A warm process that only imports torch and a job's entry module, then forks one child
per job: the export test's worker and the drills' training job both start this way.

`python -m gpudecide.portability.zygote [MODULE]` (default `gpudecide.portability.worker`;
the drills pass `gpudecide.drills.job`) prints `ready`, then reads one JSON request per line
on stdin: {"spec": path, "env": {...}, "log": path, "cwd": dir (optional), "append": bool
(optional)}. For each it forks a child that changes to `cwd`, replaces its environment with
`env`, sends its output to `log` (appended or from the start) and runs `MODULE.main([spec])`;
the zygote answers {"pid": N} at once and {"pid": N, "code": C} when the child ends (C < 0:
the signal that ended it). The zygote never trains or loads anything itself, so each child
is a fresh training process (one SIGKILL really ends) without the seconds an interpreter and
torch take to start.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from types import ModuleType

DEFAULT_ENTRY = "gpudecide.portability.worker"


def _child(entry: ModuleType, req: dict[str, object]) -> int:
    if req.get("cwd"):
        os.chdir(str(req["cwd"]))
    env = req["env"]
    assert isinstance(env, dict)
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in env.items()})
    mode = os.O_APPEND if req.get("append") else os.O_TRUNC
    fd = os.open(str(req["log"]), os.O_WRONLY | os.O_CREAT | mode, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    code: int = entry.main([str(req["spec"])])
    return code


def main(argv: list[str] | None = None) -> int:
    """Serve fork requests until stdin closes."""
    args = sys.argv[1:] if argv is None else argv
    import torch  # imported once here, inherited by every child
    import torch._dynamo  # noqa: F401 (torch.optim imports it on first use: seconds)

    entry = importlib.import_module(args[0] if args else DEFAULT_ENTRY)
    print("ready", flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = _child(entry, req)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        print(json.dumps({"pid": pid}), flush=True)
        _pid, status = os.waitpid(pid, 0)
        print(json.dumps({"pid": pid, "code": os.waitstatus_to_exitcode(status)}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
