"""Where the drilled job runs: a local process, or a Slurm job (SPEC G1, G4).

`LocalExecutor` starts `python -m gpudecide.drills.job SPEC` as a child process, optionally
after a delay (the GPU is "assigned late": until then the job is pending with a reason), or
forks it from a `Zygote` (a warm process that imported torch once: the same job in a new
process, without the seconds of start-up);
`SlurmExecutor` submits the same command with `sbatch`, holds it with `scontrol hold` and
releases it with `scontrol release`, kills with `scancel --signal=KILL`. Both report the
job's state the way a scheduler would: pending (with a reason), running, or ended (with
its exit code or the signal that ended it).
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, Protocol

from gpudecide.drills.job import OPTIONS_ENV, now_iso
from gpudecide.portability.zygote import Zygote

__all__ = [
    "DAC_CAPS",
    "LOCAL_WAIT_REASON",
    "Job",
    "LocalExecutor",
    "LocalJob",
    "SlurmExecutor",
    "SlurmJob",
    "State",
    "Status",
    "drill_zygote",
    "job_command",
]

State = Literal["pending", "running", "ended"]
# Capabilities that let root ignore file permissions; dropped to make a denial real.
DAC_CAPS = "-dac_override,-dac_read_search,-fowner"
# The local executor's wait reason while it holds a job back (Slurm's own word, explained).
LOCAL_WAIT_REASON = "Resources (GPU not yet assigned)"


@dataclass
class Status:
    """A job's state as the scheduler sees it."""

    state: State
    reason: str | None = None
    returncode: int | None = None

    @property
    def signal_name(self) -> str | None:
        """SIGKILL etc. when a signal ended the job."""
        if self.returncode is not None and self.returncode < 0:
            return signal.Signals(-self.returncode).name
        return None


class Job(Protocol):
    """A submitted job."""

    def status(self) -> Status:
        """Current state."""
        ...

    def kill(self) -> None:
        """SIGKILL the training process (node loss)."""
        ...

    def wait(self, timeout_s: float) -> Status:
        """Wait for the end (or the timeout); the state then."""
        ...


def job_command(spec: Path) -> list[str]:
    """The job's command line: this interpreter, the job module, its spec."""
    return [sys.executable, "-m", "gpudecide.drills.job", str(spec)]


def drill_zygote() -> Zygote:
    """The warm process the drills' local jobs fork from (their job module, imported once)."""
    return Zygote("gpudecide.drills.job", env=_job_env("{}"))


def _job_env(storage_options: str) -> dict[str, str]:
    env = dict(os.environ)
    env[OPTIONS_ENV] = storage_options
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return env


class LocalJob:
    """A job as a child process of the runner (or of its zygote)."""

    def __init__(
        self,
        spec: Path,
        log: Path,
        *,
        delay_s: float,
        env: dict[str, str],
        drop_dac: bool,
        zygote: Zygote | None = None,
    ) -> None:
        self.spec, self.log, self.env, self.drop_dac = spec, log, env, drop_dac
        self.zygote = None if drop_dac else zygote
        self.pid: int | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.started_at: str | None = None  # when the executor gave the job its "GPU"
        self.delay_s = delay_s
        self._lock = threading.Lock()
        self._cancelled = False
        self._timer: threading.Timer | None = None
        if delay_s > 0:
            self._timer = threading.Timer(delay_s, self._start)
            self._timer.start()
        else:
            self._start()

    def _start(self) -> None:
        with self._lock:
            if self._cancelled:
                return
            argv = job_command(self.spec)
            if self.drop_dac and os.geteuid() == 0:
                argv = ["setpriv", f"--bounding-set={DAC_CAPS}", "--", *argv]
            self.started_at = now_iso()
            if self.zygote is not None:
                self.pid = self.zygote.fork(self.spec, self.log, self.env)
                return
            with open(self.log, "ab") as out:
                self.proc = subprocess.Popen(
                    argv, stdout=out, stderr=subprocess.STDOUT, env=self.env
                )
            self.pid = self.proc.pid

    def status(self) -> Status:
        """pending until the delayed start, running, ended with the exit code or signal."""
        with self._lock:
            if self.pid is None:
                return Status("pending", LOCAL_WAIT_REASON)
            if self.zygote is not None:
                rc = self.zygote.code(self.pid)
            else:
                assert self.proc is not None
                rc = self.proc.poll()
        return Status("running") if rc is None else Status("ended", returncode=rc)

    def kill(self) -> None:
        """SIGKILL the process, as a lost node stops it: no handler, no cleanup."""
        with self._lock:
            if self.pid is None:
                self._cancelled = True
                return
            if self._may_run():
                os.kill(self.pid, signal.SIGKILL)

    def wait(self, timeout_s: float) -> Status:
        """Wait for the process (after the delayed start)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            st = self.status()
            if st.state == "ended":
                return st
            time.sleep(0.05)
        return self.status()

    def _may_run(self) -> bool:
        """Whether the process may still run (called with the lock held)."""
        if self.zygote is not None:
            return self.pid is not None and self.zygote.code(self.pid) is None
        return self.proc is not None and self.proc.poll() is None

    def cancel(self) -> None:
        """Stop everything (rollback): cancel a pending start, kill a running process."""
        if self._timer is not None:
            self._timer.cancel()
        self.kill()
        self.wait(30)


class LocalExecutor:
    """Runs jobs as local processes."""

    name = "local"

    def submit(
        self,
        spec: Path,
        log: Path,
        *,
        delay_s: float = 0.0,
        storage_options: str = "{}",
        drop_dac: bool = False,
        zygote: Zygote | None = None,
    ) -> LocalJob:
        """Start the job (after `delay_s`); options for the storage go in the environment.

        With a zygote the job is forked warm from it; a job that must run without root's
        file-permission override (`drop_dac`) always starts as a fresh process under setpriv.
        """
        env = _job_env(storage_options)
        return LocalJob(spec, log, delay_s=delay_s, env=env, drop_dac=drop_dac, zygote=zygote)


class SlurmJob:
    """A job submitted with sbatch; state from squeue, exit from sacct."""

    def __init__(self, job_id: str) -> None:
        self.job_id = job_id

    @property
    def started_at(self) -> str | None:
        """When Slurm gave the job its node (sacct Start, local time of this machine), UTC."""
        out = subprocess.run(
            ["sacct", "-n", "-X", "-P", "-j", self.job_id, "-o", "Start"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        try:
            local = datetime.strptime(out.splitlines()[0], "%Y-%m-%dT%H:%M:%S").astimezone()
        except (IndexError, ValueError):
            return None
        return local.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")

    def status(self) -> Status:
        """squeue's state and reason; ended once squeue no longer lists it."""
        out = subprocess.run(
            ["squeue", "-h", "-j", self.job_id, "-o", "%T|%r"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        if not out:
            return Status("ended", returncode=self._settled_exit_code())
        state, _, reason = out.partition("|")
        if state == "PENDING":
            return Status("pending", reason or None)
        return Status("running") if state in ("RUNNING", "CONFIGURING") else Status("ended")

    def _settled_exit_code(self, timeout_s: float = 10.0) -> int | None:
        """The exit code once accounting has it (sacct lags squeue by a moment)."""
        deadline = time.monotonic() + timeout_s
        code = self._exit_code()
        while code is None and time.monotonic() < deadline:
            time.sleep(0.5)
            code = self._exit_code()
        return code

    def _exit_code(self) -> int | None:
        """Exit code, or minus the signal that ended the batch step (sacct ExitCode `rc:sig`)."""
        out = subprocess.run(
            ["sacct", "-n", "-P", "-j", self.job_id, "-o", "JobID,ExitCode"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        codes = dict(line.split("|", 1) for line in out.splitlines() if "|" in line)
        # The batch step is the training process: its signal is the one that counts.
        code = codes.get(f"{self.job_id}.batch") or codes.get(self.job_id)
        if code is None:
            return None
        rc, _, sig = code.partition(":")
        if sig and sig != "0":
            return -int(sig)
        return int(rc) if rc.isdigit() else None

    def kill(self) -> None:
        """`scancel --batch --signal=KILL`: the training process dies as on a lost node.

        --batch: the signal goes to the batch step, where a job without srun steps trains;
        sacct then records the job FAILED with signal 9 (with --full Slurm records a cancel).
        """
        subprocess.run(["scancel", "--batch", "--signal=KILL", self.job_id], check=False)

    def release(self) -> None:
        """`scontrol release`: the held job may now be given its node."""
        subprocess.run(["scontrol", "release", self.job_id], check=True, capture_output=True)

    def wait(self, timeout_s: float) -> Status:
        """Poll until squeue no longer lists the job."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            st = self.status()
            if st.state == "ended":
                return st
            time.sleep(0.5)
        return self.status()

    def cancel(self) -> None:
        """Rollback: scancel."""
        subprocess.run(["scancel", self.job_id], check=False)


class SlurmExecutor:
    """Runs jobs through the local Slurm controller (sbatch / scontrol / scancel)."""

    name = "slurm"

    def submit(
        self,
        spec: Path,
        log: Path,
        *,
        hold: bool = False,
        storage_options: str = "{}",
    ) -> SlurmJob:
        """sbatch the job command (held with --hold when the drill delays the GPU)."""
        env = f"ALL,{OPTIONS_ENV}={storage_options},PYTHONPATH={os.pathsep.join(sys.path)}"
        argv = ["sbatch", "--parsable", f"--output={log}", f"--export={env}"]
        argv += ["--job-name=gpudecide-drill", "--ntasks=1"]
        if hold:
            argv.append("--hold")
        # exec: the training process is the batch step itself, so a signal to the batch step
        # (scancel --batch) reaches it, not only a shell above it.
        argv += ["--wrap", "exec " + shlex.join(job_command(spec))]
        out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
        return SlurmJob(out.strip().split(";")[0])
