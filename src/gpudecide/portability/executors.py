"""Where the export test's jobs run: a fresh local process, a Slurm batch job, a Kubernetes Job.

Every executor runs `python -m gpudecide.portability.worker SPEC` (see `worker`) in a
working folder of its own and returns a `JobOutcome` with the worker's result. The clean
environment of SPEC E1/E3.4 is: a new process (or a new Slurm job) whose only inputs are the
job spec and the export in storage, with an empty working folder and a minimal set of
environment variables.

    LocalExecutor().submit(spec, control_dir, "resume")
    SlurmExecutor().submit(spec, control_dir, "resume")   # sbatch --wait, then sacct
    k8s_jobs(specs, image)                                 # Job manifests (dry run only)

The Slurm executor submits with the same Python interpreter that runs the controller (a
virtual environment's python works on a node that shares the file system) and records each
job's id and final sacct state. Kubernetes needs a cluster to run: `k8s_jobs` writes and
validates the manifests; nothing is pretended to run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

from gpudecide.errors import InputError
from gpudecide.fsutil import atomic_write_text
from gpudecide.portability.zygote import Zygote

__all__ = [
    "K8S_HEADER",
    "PASS_ENV",
    "SACCT_FIELDS",
    "TERMINAL",
    "WORKER",
    "Executor",
    "JobOutcome",
    "LocalExecutor",
    "SlurmExecutor",
    "clean_env",
    "job_schema",
    "k8s_export_jobs",
    "k8s_job",
    "sacct_record",
    "slurm_available",
    "validate_k8s_job",
]

WORKER = ("-m", "gpudecide.portability.worker")
# Variables a job may inherit: locale, home, temp, CUDA device choice, S3 credentials. The
# rest of the controller's environment stays behind (a clean environment, E3.4).
PASS_ENV = (
    "PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "CUDA_VISIBLE_DEVICES", "HF_HUB_OFFLINE",
    "OMP_NUM_THREADS", "MKL_NUM_THREADS",
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL",
)  # fmt: skip
TERMINAL = (
    "COMPLETED",
    "FAILED",
    "CANCELLED",
    "TIMEOUT",
    "NODE_FAIL",
    "OUT_OF_MEMORY",
    "PREEMPTED",
)


@dataclass
class JobOutcome:
    """What one job did: its result (None when it wrote none), ids and states."""

    executor: str
    name: str
    returncode: int
    result: dict[str, Any] | None
    seconds: float
    job_id: str | None = None
    state: str | None = None
    sacct: dict[str, str] = field(default_factory=dict)
    log_tail: str = ""

    def as_dict(self) -> dict[str, Any]:
        """Evidence form (the result itself is reported by the scenario's steps)."""
        return {
            "executor": self.executor,
            "name": self.name,
            "job_id": self.job_id,
            "returncode": self.returncode,
            "state": self.state,
            "sacct": self.sacct,
            "seconds": round(self.seconds, 3),
        }


class Executor(Protocol):
    """Runs one worker job spec and waits for it."""

    name: str

    def submit(self, spec: dict[str, Any], control: Path, name: str) -> JobOutcome:
        """Run `spec` as job `name`; its spec and result files live in `control`."""
        ...


def _prepare(spec: dict[str, Any], control: Path, name: str) -> tuple[Path, Path, Path]:
    control.mkdir(parents=True, exist_ok=True)
    result = control / f"{name}.result.json"
    result.unlink(missing_ok=True)
    spec = {**spec, "result": str(result)}
    spec_path = control / f"{name}.spec.json"
    atomic_write_text(spec_path, json.dumps(spec, indent=2) + "\n")
    cwd = Path(spec.get("workdir") or spec.get("output_dir") or control)
    cwd.mkdir(parents=True, exist_ok=True)
    return spec_path, result, cwd


def _read_result(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else None


def clean_env() -> dict[str, str]:
    """The environment a job gets: only PASS_ENV, plus single-threaded tokenizers."""
    env = {k: os.environ[k] for k in PASS_ENV if k in os.environ}
    env["PYTHONNOUSERSITE"] = "1"
    return env


class LocalExecutor:
    """A fresh Python process per job (the embedded default).

    `warm=False`: a new interpreter per job (`python -m gpudecide.portability.worker`).
    `warm=True`: the job is forked from a warm process that has imported torch and the
    worker and done nothing else (`gpudecide.portability.zygote`): still a new process with
    no training state, a clean environment and its own empty folder, without paying the
    interpreter and torch start-up (seconds) for every job. `close()` ends the warm process.
    """

    name = "local"

    def __init__(self, timeout: float = 3600, warm: bool = False) -> None:
        self.timeout = timeout
        self.warm = warm
        self._zygote: Zygote | None = None

    def close(self) -> None:
        """Stop the warm process, if one was started."""
        if self._zygote is not None:
            self._zygote.close()
            self._zygote = None

    def _submit_warm(self, spec_path: Path, control: Path, name: str, cwd: Path) -> JobOutcome:
        if self._zygote is None:
            self._zygote = Zygote(env=clean_env())
        log = control / f"{name}.log"
        started = time.perf_counter()
        pid = self._zygote.fork(spec_path, log, clean_env(), cwd=cwd, append=False)
        code = self._zygote.wait(pid, self.timeout)
        if code is None:  # past the timeout: end it as a scheduler would
            os.kill(pid, signal.SIGKILL)
            code = self._zygote.wait(pid, 30)
        code = -9 if code is None else code
        text = log.read_text(errors="replace") if log.is_file() else ""
        return JobOutcome(
            executor=self.name,
            name=name,
            returncode=code,
            result=_read_result(control / f"{name}.result.json"),
            seconds=time.perf_counter() - started,
            state="exited",
            log_tail=text[-2000:],
        )

    def submit(self, spec: dict[str, Any], control: Path, name: str) -> JobOutcome:
        """Run the job in a new process and wait for it."""
        spec_path, result, cwd = _prepare(spec, control, name)
        if self.warm:
            return self._submit_warm(spec_path, control, name, cwd)
        started = time.perf_counter()
        try:
            done = subprocess.run(
                [sys.executable, *WORKER, str(spec_path)],
                cwd=cwd,
                env=clean_env(),
                capture_output=True,
                text=True,
                timeout=self.timeout,
                check=False,
            )
            code, state, tail = done.returncode, "exited", (done.stdout + done.stderr)[-2000:]
        except subprocess.TimeoutExpired:  # killed by subprocess.run; no result is written
            code, state, tail = -9, "timeout", f"killed after {self.timeout} s"
        return JobOutcome(
            executor=self.name,
            name=name,
            returncode=code,
            result=_read_result(result),
            seconds=time.perf_counter() - started,
            state=state,
            log_tail=tail,
        )


def slurm_available() -> bool:
    """Whether sbatch exists and a Slurm controller answers."""
    if shutil.which("sbatch") is None or shutil.which("scontrol") is None:
        return False
    try:
        ping = subprocess.run(
            ["scontrol", "ping"], capture_output=True, text=True, timeout=20, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "UP" in ping.stdout


SACCT_FIELDS = ("JobID", "JobName", "State", "ExitCode", "Submit", "Start", "End", "NodeList")


def sacct_record(job_id: str, wait: float = 30.0) -> dict[str, str]:
    """The job's allocation line from sacct, once it shows a terminal state."""
    deadline = time.monotonic() + wait
    row: dict[str, str] = {}
    while True:
        done = subprocess.run(
            ["sacct", "-j", job_id, "-X", "-n", "-P", "-o", ",".join(SACCT_FIELDS)],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        lines = [ln for ln in done.stdout.splitlines() if ln.strip()]
        if lines:
            row = dict(zip(SACCT_FIELDS, lines[0].split("|"), strict=False))
            if row.get("State", "").split(" ")[0] in TERMINAL:
                return row
        if time.monotonic() > deadline:
            return row
        time.sleep(0.5)


class SlurmExecutor:
    """Each job an sbatch job on the cluster the `sbatch` on PATH talks to."""

    name = "slurm"

    def __init__(
        self,
        timeout: float = 3600,
        mem: str = "2G",
        partition: str | None = None,
        job_prefix: str = "gpudecide",
    ) -> None:
        self.timeout = timeout
        self.mem = mem
        self.partition = partition
        self.job_prefix = job_prefix

    def _command(self, spec_path: Path, control: Path, name: str, cwd: Path) -> list[str]:
        python = sys.executable  # the venv's interpreter: the node shares this file system
        cmd = [
            "sbatch", "--parsable", "--wait", f"--job-name={self.job_prefix}-{name}",
            f"--output={control}/{name}.slurm-%j.out", f"--chdir={cwd}",
            f"--mem={self.mem}", "--cpus-per-task=1", "--ntasks=1",
            f"--export={','.join(k for k in PASS_ENV if k in os.environ) or 'NONE'}",
            f"--wrap=exec {python} {' '.join(WORKER)} {spec_path}",
        ]  # fmt: skip
        if self.partition:
            cmd.insert(1, f"--partition={self.partition}")
        return cmd

    def submit(self, spec: dict[str, Any], control: Path, name: str) -> JobOutcome:
        """sbatch the job, wait for it to end, read its sacct record."""
        if not slurm_available():
            raise InputError(
                "no Slurm controller answers (scontrol ping)",
                field="--executor",
                hint="start one (scripts/slurm-local start) or use --executor local",
            )
        spec_path, result, cwd = _prepare(spec, control, name)
        started = time.perf_counter()
        try:
            done = subprocess.run(
                self._command(spec_path, control, name, cwd),
                capture_output=True,
                text=True,
                timeout=self.timeout,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise InputError(
                "Slurm job {name} ran past {timeout} s", name=name, timeout=self.timeout
            ) from exc
        match = re.match(r"^(\d+)", done.stdout.strip())
        job_id = match.group(1) if match else None
        row = sacct_record(job_id) if job_id else {}
        logs = sorted(control.glob(f"{name}.slurm-*.out"))
        tail = logs[-1].read_text(errors="replace")[-2000:] if logs else ""
        return JobOutcome(
            executor=self.name,
            name=name,
            returncode=done.returncode,
            result=_read_result(result),
            seconds=time.perf_counter() - started,
            job_id=job_id,
            state=row.get("State"),
            sacct=row,
            log_tail=(done.stderr[-1000:] + tail)[-2000:],
        )


# ---- Kubernetes (dry run) ---------------------------------------------------------------

_DNS = re.compile(r"[^a-z0-9-]+")


def _dns_name(text: str) -> str:
    name = _DNS.sub("-", text.lower()).strip("-")[:63].strip("-")
    return name or "gpudecide-job"


def k8s_job(spec: dict[str, Any], name: str, image: str, gpu: bool) -> dict[str, Any]:
    """A batch/v1 Job that runs one worker spec in an emptyDir working folder."""
    container: dict[str, Any] = {
        "name": "worker",
        "image": image,
        "command": ["python", *WORKER, "-"],
        "workingDir": "/work",
        "env": [{"name": "GPUDECIDE_JOB_SPEC", "value": json.dumps(spec, sort_keys=True)}],
        "volumeMounts": [{"name": "work", "mountPath": "/work"}],
        "resources": {
            "requests": {"cpu": "1", "memory": "2Gi"},
            "limits": {"memory": "4Gi", **({"nvidia.com/gpu": "1"} if gpu else {})},
        },
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": _dns_name(f"gpudecide-{name}"),
            "labels": {"app.kubernetes.io/name": "gpudecide-export-test"},
        },
        "spec": {
            "backoffLimit": 0,
            "ttlSecondsAfterFinished": 86400,
            "template": {
                "metadata": {"labels": {"app.kubernetes.io/name": "gpudecide-export-test"}},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [container],
                    "volumes": [{"name": "work", "emptyDir": {}}],
                },
            },
        },
    }


def job_schema() -> dict[str, Any]:
    """The vendored Kubernetes Job JSON schema subset (see its `$comment` for the source)."""
    path = resources.files("gpudecide.portability") / "schemas" / "k8s-job-batch-v1.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def validate_k8s_job(manifest: dict[str, Any]) -> list[str]:
    """Schema errors of one Job manifest (empty when valid), as `path: message` lines."""
    import jsonschema  # type: ignore[import-untyped]

    validator = jsonschema.Draft7Validator(job_schema())
    return [
        f"{'/'.join(str(p) for p in err.absolute_path) or '(root)'}: {err.message}"
        for err in sorted(validator.iter_errors(manifest), key=lambda e: list(e.absolute_path))
    ]


K8S_HEADER = """\
# gpudecide export-test: Kubernetes Jobs for steps 2 (train) and 5 (restore + resume).
# Apply and wait for the first:   kubectl apply -f THIS --selector step=train ...
# Step 3 (export) runs inside the train Job; step 4 (delete): `kubectl delete job` of the
# train Job removes its pod and emptyDir volume; `kubectl get job,pod` confirms it is gone.
# Then apply the resume Job: an empty emptyDir that sees only the export in storage.
# Storage credentials: mount them as a Secret (not written here).
"""


def k8s_export_jobs(
    plan: Any, url: str, options: dict[str, Any], image: str, device: str, resume: str | None
) -> list[dict[str, Any]]:
    """The train and resume Jobs of an export test (worker specs inside the env)."""
    train_cfg = plan.model.train_config(device).model_dump()
    resume_cfg = plan.model.train_config(resume or device).model_dump()
    public = {k: v for k, v in options.items() if k not in ("key", "secret", "token")}
    name = f"{plan.option}-export-test"
    train_spec = {
        "action": "train",
        "config": train_cfg,
        "output_dir": "/work/volume/run",
        "container_digest": image,
        "export": {"storage": url, "storage_options": public, "name": name},
    }
    resume_spec = {
        "action": "resume",
        "config": resume_cfg,
        "workdir": "/work/restore",
        "storage": url,
        "storage_options": public,
        "export_name": name,
        "checkpoint": f"checkpoint-{plan.model.checkpoint_step}",
    }
    jobs = [
        k8s_job(train_spec, f"{name}-train", image, device == "cuda"),
        k8s_job(resume_spec, f"{name}-resume", image, (resume or device) == "cuda"),
    ]
    for job, step in zip(jobs, ("train", "resume"), strict=True):
        job["metadata"]["labels"]["step"] = step
    return jobs
