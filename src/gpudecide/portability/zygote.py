"""A warm process that only imports torch and the worker, then forks one child per job.

`python -m gpudecide.portability.zygote` prints `ready`, then reads one JSON request per
line on stdin: {"spec": path, "cwd": dir, "env": {...}, "log": path}. For each it forks a
child that changes to `cwd`, replaces its environment with `env`, sends its output to
`log` and runs the worker on `spec`; the zygote answers {"pid": N} at once and
{"pid": N, "code": C} when the child ends. The zygote never trains or loads anything
itself, so each child starts with no training state: a clean process without the seconds
an interpreter and torch take to start.
"""

from __future__ import annotations

import json
import os
import sys


def _child(req: dict[str, object]) -> int:
    os.chdir(str(req["cwd"]))
    env = req["env"]
    assert isinstance(env, dict)
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in env.items()})
    fd = os.open(str(req["log"]), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    from gpudecide.portability import worker

    return worker.main([str(req["spec"])])


def main() -> int:
    """Serve fork requests until stdin closes."""
    import torch
    import torch._dynamo  # noqa: F401 (torch.optim imports it on first use: seconds)

    import gpudecide.portability.worker  # noqa: F401

    print("ready", flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = _child(req)
            finally:
                os._exit(code)
        print(json.dumps({"pid": pid}), flush=True)
        _pid, status = os.waitpid(pid, 0)
        print(json.dumps({"pid": pid, "code": os.waitstatus_to_exitcode(status)}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
