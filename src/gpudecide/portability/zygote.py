"""A warm process that only imports torch and a job's entry module, then forks one child
per job: the export test's worker and the drills' training job both start this way.

`python -m gpudecide.portability.zygote [MODULE]` (default `gpudecide.portability.worker`;
the drills pass `gpudecide.drills.job`) prints `ready`, then reads one JSON request per line
on stdin: {"spec": path, "env": {...}, "log": path, "cwd": dir (optional), "append": bool
(optional)}. For each it forks a child that changes to `cwd`, replaces its environment with
`env`, sends its output to `log` (appended or from the start) and runs `MODULE.main([spec])`;
the zygote answers {"pid": N} at once and {"pid": N, "code": C} when the child ends (C < 0:
the signal that ended it). The log is opened before anything else the child does, so a job
that cannot start (a folder that is gone, an exception) leaves its traceback there. The
zygote never trains or loads anything itself, so each child is a fresh training process
(one SIGKILL really ends) without the seconds an interpreter and torch take to start.

`Zygote` is the one client of it: the export test's local executor and the drills use it.
"""

from __future__ import annotations

import importlib
import json
import os
import queue
import subprocess
import sys
import threading
import traceback
from pathlib import Path
from types import ModuleType

__all__ = [
    "DEFAULT_ENTRY",
    "Zygote",
    "main",
]

DEFAULT_ENTRY = "gpudecide.portability.worker"


class Zygote:
    """A started zygote: forks one job at a time and collects each job's exit code.

    A reader thread takes the zygote's answers as they come, so a caller can poll a running
    job (`code`), wait for it with a timeout (`wait`) or kill it by its pid meanwhile.
    """

    def __init__(self, entry: str = DEFAULT_ENTRY, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gpudecide.portability.zygote", entry],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._stdin, self._stdout = self.proc.stdin, self.proc.stdout
        if self._stdout.readline().strip() != "ready":
            self.close()
            raise RuntimeError(f"the warm job server for {entry} did not start")
        self._codes: dict[int, int] = {}
        self._ended = threading.Condition()
        self._pids: queue.Queue[int] = queue.Queue()
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self._stdout:
            msg = json.loads(line)
            if "code" in msg:
                with self._ended:
                    self._codes[int(msg["pid"])] = int(msg["code"])
                    self._ended.notify_all()
            else:
                self._pids.put(int(msg["pid"]))
        with self._ended:  # the zygote is gone: nobody waits for a code that cannot come
            self._ended.notify_all()

    def fork(
        self,
        spec: Path,
        log: Path,
        env: dict[str, str],
        *,
        cwd: Path | None = None,
        append: bool = True,
    ) -> int:
        """Start one job; its pid (the zygote runs one job at a time, in order)."""
        req: dict[str, object] = {"spec": str(spec), "log": str(log), "env": env}
        req["append"] = append
        if cwd is not None:
            req["cwd"] = str(cwd)
        with self._lock:
            self._stdin.write(json.dumps(req) + "\n")
            self._stdin.flush()
            return self._pids.get(timeout=60)

    def code(self, pid: int) -> int | None:
        """The exit code of a job once it ended (negative: the signal), else None."""
        with self._ended:
            return self._codes.get(pid)

    def wait(self, pid: int, timeout: float) -> int | None:
        """The job's exit code, waiting up to `timeout` seconds; None if it still runs."""
        with self._ended:
            self._ended.wait_for(
                lambda: pid in self._codes or self.proc.poll() is not None, timeout
            )
            return self._codes.get(pid)

    def close(self) -> str:
        """Stop the zygote (a rollback: safe to call twice)."""
        if self.proc.poll() is None:
            self._stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        return "zygote stopped"


def _child(entry: ModuleType, req: dict[str, object]) -> int:
    """Run one job in the forked child: its log first (so that whatever goes wrong next is
    in it), then its folder, its environment and the entry's `main`. A job that raises says
    so in its log with the traceback, and exits 1."""
    mode = os.O_APPEND if req.get("append") else os.O_TRUNC
    fd = os.open(str(req["log"]), os.O_WRONLY | os.O_CREAT | mode, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    try:
        if req.get("cwd"):
            os.chdir(str(req["cwd"]))
        env = req["env"]
        assert isinstance(env, dict)
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in env.items()})
        code: int = entry.main([str(req["spec"])])
    except SystemExit as exc:  # sys.exit(n) in the job: its code, as a process would exit
        return exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    except BaseException:  # the child's last word, whatever ended it
        traceback.print_exc()
        return 1
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
            except BaseException:  # no log to write to: the zygote's stderr
                traceback.print_exc(file=sys.__stderr__)
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
