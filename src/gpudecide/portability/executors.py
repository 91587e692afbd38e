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

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

from gpudecide.errors import InputError, excerpt
from gpudecide.fsutil import atomic_write_text
from gpudecide.portability.zygote import Zygote

__all__ = [
    "DEFAULT_SECRET",
    "K8S_HEADER",
    "PASS_ENV",
    "SACCT_FIELDS",
    "SECRET_ENV_PREFIX",
    "TERMINAL",
    "WORKER",
    "Executor",
    "JobOutcome",
    "LocalExecutor",
    "SlurmExecutor",
    "clean_env",
    "is_secret_option",
    "job_schema",
    "k8s_export_jobs",
    "k8s_header",
    "k8s_job",
    "last_lines",
    "sacct_record",
    "secret_name",
    "slurm_available",
    "slurm_cluster",
    "split_storage_options",
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
    """What one job did: its result (None when it wrote none), ids and states.

    `returncode` is the job's exit code (negative: the signal that ended it); `state` what
    ended it ("exited", "timeout" when the harness stopped it, a Slurm state); `log_tail`
    the last lines of its output (stderr included), what says why a job wrote no result;
    `host` where it ran (the worker's own hostname, else the scheduler's node list).
    """

    executor: str
    name: str
    returncode: int
    result: dict[str, Any] | None
    seconds: float
    job_id: str | None = None
    state: str | None = None
    sacct: dict[str, str] = field(default_factory=dict)
    log_tail: str = ""
    host: str | None = None
    timeout: float | None = None

    def __post_init__(self) -> None:
        # The worker's own hostname is the most precise: a node list may name several.
        host = self.result.get("host") if self.result is not None else None
        if isinstance(host, str) and host:
            self.host = host

    def as_dict(self) -> dict[str, Any]:
        """Evidence form (the result itself is reported by the scenario's steps)."""
        out: dict[str, Any] = {
            "executor": self.executor,
            "name": self.name,
            "job_id": self.job_id,
            "returncode": self.returncode,
            "state": self.state,
            "sacct": self.sacct,
            "seconds": round(self.seconds, 3),
        }
        if self.host:
            out["host"] = self.host
        return out


def last_lines(text: str, lines: int = 12, chars: int = 1500) -> str:
    """The last `lines` non-empty lines of a job's output, at most `chars` characters: what a
    reader needs to see why it ended (a traceback's last frames and its exception)."""
    kept = [ln.rstrip() for ln in text.splitlines() if ln.strip()][-lines:]
    return "\n".join(kept)[-chars:]


class Executor(Protocol):
    """Runs one worker job spec and waits for it; `cluster` names the Slurm cluster it
    submits to ("" for a local executor)."""

    name: str
    cluster: str

    def submit(self, spec: dict[str, Any], control: Path, name: str) -> JobOutcome:
        """Run `spec` as job `name`; its spec and result files live in `control`."""
        ...


def _prepare(spec: dict[str, Any], control: Path, name: str) -> tuple[Path, Path, Path]:
    """Write the job's spec beside its result path; every path absolute, so that a job that
    changes into its own folder (every job does) still finds its spec, result and log
    whatever the controller's working folder is (a workspace given as a relative path)."""
    control = control.resolve()
    control.mkdir(parents=True, exist_ok=True)
    result = control / f"{name}.result.json"
    result.unlink(missing_ok=True)
    folders = {k: str(Path(spec[k]).resolve()) for k in ("workdir", "output_dir") if spec.get(k)}
    spec = {**spec, **folders, "result": str(result)}
    spec_path = control / f"{name}.spec.json"
    # The spec may carry storage options (an endpoint's credentials): readable by its owner.
    atomic_write_text(spec_path, json.dumps(spec, indent=2) + "\n")
    os.chmod(spec_path, 0o600)
    cwd = Path(spec.get("workdir") or spec.get("output_dir") or control).resolve()
    cwd.mkdir(parents=True, exist_ok=True)
    return spec_path, result, cwd


def _read_result(path: Path) -> dict[str, Any] | None:
    """The job's result, None when it wrote none or wrote something that is not a result (a
    job killed while the file was renamed into place cannot leave half a file: it is
    written atomically)."""
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
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
    cluster = ""

    def __init__(self, timeout: float = 3600, warm: bool = False) -> None:
        self.timeout = timeout
        self.warm = warm
        self._zygote: Zygote | None = None

    @property
    def zygote(self) -> Zygote | None:
        """The warm process jobs are forked from (None until the first warm job)."""
        return self._zygote

    def close(self) -> None:
        """Stop the warm process, if one was started."""
        if self._zygote is not None:
            self._zygote.close()
            self._zygote = None

    def _submit_warm(self, spec_path: Path, control: Path, name: str, cwd: Path) -> JobOutcome:
        if self._zygote is None:
            self._zygote = Zygote(env=clean_env())
        log = control.resolve() / f"{name}.log"
        started = time.perf_counter()
        pid = self._zygote.fork(spec_path, log, clean_env(), cwd=cwd, append=False)
        code = self._zygote.wait(pid, self.timeout)
        state = "exited"
        if code is None and self._zygote.proc.poll() is None:
            state = "timeout"  # past the timeout: end it as a scheduler would
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            code = self._zygote.wait(pid, 30)
        elif code is None:  # the warm process itself is gone, and the job with it
            state = "zygote_gone"
            self._zygote = None
        code = -signal.SIGKILL if code is None else code
        text = log.read_text(errors="replace") if log.is_file() else ""
        return JobOutcome(
            executor=self.name,
            name=name,
            returncode=code,
            result=_read_result(control / f"{name}.result.json"),
            seconds=time.perf_counter() - started,
            state=state,
            log_tail=last_lines(text),
            host=socket.gethostname(),
            timeout=self.timeout if state == "timeout" else None,
        )

    def submit(self, spec: dict[str, Any], control: Path, name: str) -> JobOutcome:
        """Run the job in a new process and wait for it."""
        spec_path, result, cwd = _prepare(spec, control, name)
        if self.warm:
            return self._submit_warm(spec_path, control, name, cwd)
        started = time.perf_counter()
        timeout = None
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
            code, state = done.returncode, "exited"
            tail = last_lines(done.stdout + "\n" + done.stderr)
        except subprocess.TimeoutExpired as exc:  # killed by subprocess.run; no result written
            code, state, timeout = -signal.SIGKILL, "timeout", self.timeout
            tail = last_lines(_text(exc.stdout) + "\n" + _text(exc.stderr))
        return JobOutcome(
            executor=self.name,
            name=name,
            returncode=code,
            result=_read_result(result),
            seconds=time.perf_counter() - started,
            state=state,
            log_tail=tail,
            host=socket.gethostname(),
            timeout=timeout,
        )


def _text(data: str | bytes | None) -> str:
    if isinstance(data, bytes):
        return data.decode(errors="replace")
    return data or ""


def slurm_available() -> bool:
    """Whether sbatch and sacct exist and the primary Slurm controller answers UP."""
    if any(shutil.which(tool) is None for tool in ("sbatch", "scontrol", "sacct")):
        return False
    try:
        ping = subprocess.run(
            ["scontrol", "ping"], capture_output=True, text=True, timeout=20, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    # "Slurmctld(primary) at host is UP"; a backup UP beside a primary DOWN still schedules.
    return ping.returncode == 0 and re.search(r"\bis UP\b", ping.stdout) is not None


def slurm_cluster() -> str:
    """The cluster's name (`ClusterName` of `scontrol show config`, what sacct's Cluster
    column shows); "" when it cannot be read."""
    try:
        shown = subprocess.run(
            ["scontrol", "show", "config"], capture_output=True, text=True, timeout=20, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    found = re.search(r"^ClusterName\s*=\s*(\S+)", shown.stdout, re.MULTILINE)
    return found.group(1) if found else ""


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
    """Each job an sbatch job on the cluster the `sbatch` on PATH talks to.

    `cluster` is that cluster's name, read when the executor is made; the export test is
    refused before it starts when no controller answers (`runs`), and a job that ends
    meanwhile without a result is reported with its sacct state and its output's last lines.
    """

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
        self.cluster = slurm_cluster() if shutil.which("scontrol") else ""

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
        control = control.resolve()
        started = time.perf_counter()
        timeout = None
        try:
            done = subprocess.run(
                self._command(spec_path, control, name, cwd),
                capture_output=True,
                text=True,
                timeout=self.timeout,
                check=False,
            )
            code, out, err = done.returncode, done.stdout, done.stderr
        except subprocess.TimeoutExpired as exc:
            # sbatch --wait was stopped, not the job: cancel it, as the harness's own limit.
            code, out, err, timeout = (
                -signal.SIGKILL,
                _text(exc.stdout),
                _text(exc.stderr),
                (self.timeout),
            )
        match = re.match(r"^(\d+)", out.strip())
        job_id = match.group(1) if match else None
        if timeout is not None and job_id:
            subprocess.run(["scancel", job_id], capture_output=True, timeout=30, check=False)
        row = sacct_record(job_id) if job_id else {}
        logs = sorted(control.glob(f"{name}.slurm-*.out"))
        log = logs[-1].read_text(errors="replace") if logs else ""
        return JobOutcome(
            executor=self.name,
            name=name,
            returncode=code,
            result=_read_result(result),
            seconds=time.perf_counter() - started,
            job_id=job_id,
            state="timeout" if timeout is not None else row.get("State"),
            sacct=row,
            log_tail=last_lines(err + "\n" + log),
            host=row.get("NodeList") or None,
            timeout=timeout,
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
"""

DEFAULT_SECRET = "gpudecide-export-storage"
_SECRET_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
# A storage option whose key ends with one of these words holds a credential.
_SECRET_KEY = re.compile(
    r"(?i)(^|[_.-])(key|secret|token|password|passwd|pwd|credentials?|auth|authorization|"
    r"signature|sas|session)$"
)
_SECRET_DATA_KEY = re.compile(r"[^-._a-zA-Z0-9]")
SECRET_ENV_PREFIX = "GPUDECIDE_STORAGE_SECRET_"


def secret_name(name: str | None) -> str:
    """The Kubernetes Secret the storage credentials come from (a DNS-1123 subdomain)."""
    chosen = name or DEFAULT_SECRET
    if len(chosen) > 253 or not _SECRET_NAME.fullmatch(chosen):
        raise InputError(
            "{name} is not a Kubernetes Secret name",
            field="--secret",
            hint="lower-case letters, digits, '-' and '.', e.g. gpudecide-export-storage",
            name=excerpt(chosen),
        )
    return chosen


# A value shaped like a key or a token: 16+ token characters mixing letters and digits.
_TOKEN_VALUE = re.compile(r"[A-Za-z0-9+/_=\-]{16,}")


def is_secret_option(key: str, value: object) -> bool:
    """Whether a storage option holds a credential: its key names one (key, secret, token,
    password, ...) or its value looks like one (a URL's user information, a token)."""
    if _SECRET_KEY.search(key):
        return True
    if not isinstance(value, str):
        return False
    if "://" in value and "@" in value.split("://", 1)[1].split("/", 1)[0]:
        return True
    return any(
        any(c.isdigit() for c in run) and any(c.isalpha() for c in run)
        for run in _TOKEN_VALUE.findall(value)
        if not re.fullmatch(r"[0-9a-f]+", run)  # a hex digest is not a credential
    )


def split_storage_options(
    options: dict[str, Any],
) -> tuple[dict[str, Any], dict[str, str]]:
    """The options a manifest may carry, and for each credential the environment variable
    that receives it from the Secret (the option's key is the Secret's data key)."""
    public = {k: v for k, v in options.items() if not is_secret_option(k, v)}
    secret = {
        k: f"{SECRET_ENV_PREFIX}{i}"
        for i, k in enumerate(sorted(k for k in options if k not in public))
    }
    return public, secret


def _secret_env(secret: str, from_env: dict[str, str]) -> list[dict[str, Any]]:
    return [
        {
            "name": var,
            "valueFrom": {"secretKeyRef": {"name": secret, "key": _SECRET_DATA_KEY.sub("-", k)}},
        }
        for k, var in from_env.items()
    ]


def k8s_header(secret: str, jobs: list[dict[str, Any]]) -> str:
    """The manifests' header: how to apply them, and the Secret they read credentials from
    (the keys it must hold; never their values)."""
    keys = sorted(
        {
            e["valueFrom"]["secretKeyRef"]["key"]
            for job in jobs
            for c in job["spec"]["template"]["spec"]["containers"]
            for e in c.get("env", [])
            if "valueFrom" in e
        }
    )
    literals = " ".join(f"--from-literal={k}=..." for k in keys)
    return K8S_HEADER + (
        f"# Storage credentials come from the Secret {secret!r}, never from this file:\n"
        f"#   kubectl create secret generic {secret} {literals}"
        f"{' ' if literals else ''}--from-literal=AWS_ACCESS_KEY_ID=... "
        f"--from-literal=AWS_SECRET_ACCESS_KEY=...\n"
    )


def k8s_export_jobs(
    plan: Any,
    url: str,
    options: dict[str, Any],
    image: str,
    device: str,
    resume: str | None,
    *,
    secret: str = DEFAULT_SECRET,
    option: str | None = None,
) -> list[dict[str, Any]]:
    """The train and resume Jobs of an export test (worker specs inside the env). No
    credential is written into them: a storage option that holds one is read by the worker
    from an environment variable the Secret `secret` fills, and the Secret's variables
    (AWS_ACCESS_KEY_ID, ...) reach the container through envFrom."""
    train_cfg = plan.model.train_config(device).model_dump()
    resume_cfg = plan.model.train_config(resume or device).model_dump()
    public, from_env = split_storage_options(options)
    name = f"{option or plan.option}-export-test"
    train_spec = {
        "action": "train",
        "config": train_cfg,
        "output_dir": "/work/volume/run",
        "container_digest": image,
        "export": {
            "storage": url,
            "storage_options": public,
            "storage_options_from_env": from_env,
            "name": name,
        },
    }
    resume_spec = {
        "action": "resume",
        "config": resume_cfg,
        "workdir": "/work/restore",
        "storage": url,
        "storage_options": public,
        "storage_options_from_env": from_env,
        "export_name": name,
        "checkpoint": f"checkpoint-{plan.model.checkpoint_step}",
    }
    jobs = [
        k8s_job(train_spec, f"{name}-train", image, device == "cuda"),
        k8s_job(resume_spec, f"{name}-resume", image, (resume or device) == "cuda"),
    ]
    for job, step in zip(jobs, ("train", "resume"), strict=True):
        job["metadata"]["labels"]["step"] = step
        container = job["spec"]["template"]["spec"]["containers"][0]
        container["env"] += _secret_env(secret, from_env)
        container["envFrom"] = [{"secretRef": {"name": secret, "optional": not from_env}}]
    return jobs
