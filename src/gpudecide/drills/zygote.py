"""A warm process that imports torch and the drilled job once, then forks one child per job.

`python -m gpudecide.drills.zygote` prints `ready`, then reads one JSON request a line on
stdin: {"spec": path, "log": path, "env": {...}}. For each it forks a child that takes the
given environment, sends its output to `log` and runs `gpudecide.drills.job` on `spec`; the
zygote answers {"pid": N} at once and {"pid": N, "code": C} when the child ends (C < 0: the
signal that ended it). The zygote itself never trains, so each child is a fresh training
process, a real one that SIGKILL ends, without the seconds importing torch takes.
"""

from __future__ import annotations

import json
import os
import sys


def _child(req: dict[str, object]) -> int:
    env = req["env"]
    assert isinstance(env, dict)
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in env.items()})
    fd = os.open(str(req["log"]), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    from gpudecide.drills import job

    return job.main([str(req["spec"])])


def main() -> int:
    """Serve fork requests until stdin closes."""
    import torch  # imported once here, inherited by every child
    import torch._dynamo  # noqa: F401 - torch.optim imports it on first use: seconds

    import gpudecide.drills.job  # noqa: F401

    print("ready", flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = _child(req)
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
