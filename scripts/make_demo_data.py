#!/usr/bin/env python3
"""Generate the demo's data files once; `gpudecide demo` copies them into its workspace.

    .venv/bin/python scripts/make_demo_data.py      # rewrites src/gpudecide/*/demo_data/

The demo's job log is an 8-week `sacct --allusers --duplicates --parsable2` output of a
fictional bank's ML platform team, in exactly the shape a real Slurm 22.05 prints (compare
tests/fixtures/sacct/, recorded from a real cluster): job lines followed by their `.batch`,
`.extern` and `.0` steps, requeue attempts listed twice, a job cancelled before it ever ran,
array tasks, dependency and begin-time waits, local Asia/Almaty times.

The story (SPEC F1): three full LoRA trainings of an 8B model, each surrounded by smoke
runs, a crash restart, evaluations, adapter merges, quantisation and exports; a weekly
scheduled evaluation of the production model; 47 GPU jobs in all.
"""

from __future__ import annotations

import copy
import json
import struct
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml

from gpudecide import workspace
from gpudecide.artifacts.demo import DATA as EXPORT_DATA
from gpudecide.fsutil import atomic_write_bytes, atomic_write_text
from gpudecide.jobs.demo import LOG_DATA
from gpudecide.jobs.sacct import RECOMMENDED_FIELDS

WEEK1 = datetime(2026, 6, 1)  # a Monday
ACCOUNT = "ml-platform"
FIRST_ID = 41870
CHAINS = ("kazllm-8b-r1", "kazllm-8b-instruct-r1", "kazllm-8b-v2-r1")


@dataclass
class DemoJob:
    """One job as the team ran it; times are local (Asia/Almaty), minutes after submit."""

    day: int
    at: str
    name: str
    user: str
    gpus: int
    minutes: float
    state: str = "COMPLETED"
    wait: float = 2.0
    after: int | None = None  # index of the job it depended on (afterok)
    begin_days: float = 0.0  # --begin this many days after submit (planned ahead)
    comment: str = ""
    exit_code: str = "0:0"
    limit_h: int = 48
    requeue_after: float | None = None  # minutes into the run when it was preempted+requeued
    never_ran: bool = False
    array: tuple[str, int] | None = None  # (array job id, task id)
    reason: str = "None"  # what sacct keeps in Reason after a wait (Resources, QOS...)


def _label(kind: str, chain: str | None = None) -> str:
    """The `sbatch --comment` the team uses to label jobs."""
    return f"kind={kind}" + (f" chain={chain}" if chain else "")


def _model_a(j: list[DemoJob]) -> None:
    """Weeks 1-2: model A and everything around its training."""
    a = CHAINS[0]
    # Weeks 1-2: model A, a LoRA fine-tune of an 8B model. The first run loses its node
    # after 22 h (at ~82 %); it was not resumable, so the re-run starts from zero.
    j += [
        DemoJob(0, "10:05", "smoke-kazllm-data", "aigerim", 1, 18, comment=_label("smoke", a)),
        DemoJob(
            0,
            "11:20",
            "smoke-kazllm-lora",
            "aigerim",
            2,
            24,
            "FAILED",
            exit_code="1:0",
            comment=_label("smoke", a),
        ),
        DemoJob(0, "14:40", "smoke-kazllm-lora", "aigerim", 2, 31, comment=_label("smoke", a)),
        DemoJob(
            1,
            "09:00",
            "ft-kazllm-lora-train",
            "daniyar",
            8,
            22 * 60 + 10,
            "NODE_FAIL",
            wait=95,
            reason="Resources",
            comment=_label("train", a),
        ),
        DemoJob(
            2,
            "08:30",
            "ft-kazllm-lora-train",
            "daniyar",
            8,
            27 * 60 + 40,
            wait=240,
            reason="Resources",
            comment=_label("train", a),
        ),
        DemoJob(2, "08:31", "eval-kazllm-mmlu", "olga", 2, 95, after=4, comment=_label("eval", a)),
        DemoJob(3, "13:10", "eval-kazllm-safety", "olga", 1, 52, comment=_label("eval", a)),
        DemoJob(
            2,
            "08:32",
            "merge-kazllm-adapter",
            "daniyar",
            1,
            21,
            after=5,
            comment=_label("merge", a),
        ),
        DemoJob(
            2,
            "08:33",
            "quantize-kazllm-awq",
            "daniyar",
            1,
            68,
            after=7,
            comment=_label("quantize", a),
        ),
        DemoJob(
            2, "08:34", "export-kazllm-gguf", "daniyar", 1, 14, after=8, comment=_label("export", a)
        ),
        DemoJob(4, "10:00", "eval-kazllm-regression", "olga", 1, 41),
    ]


def _weekly_eval(j: list[DemoJob]) -> None:
    """The weekly scheduled evaluation of the production model."""
    # Weekly evaluation of the production model, planned: submitted Friday for Monday 06:00.
    for week in range(8):
        j.append(
            DemoJob(
                7 * week - 3,
                "17:00",
                "eval-prod-weekly",
                "timur",
                1,
                44,
                begin_days=2.54,
                wait=3,
                comment=_label("eval"),
            )
        )


def _week3(j: list[DemoJob]) -> None:
    """Week 3: a new attention kernel."""
    # Week 3: trying a new attention kernel.
    j += [
        DemoJob(15, "11:00", "smoke-kazllm-flashattn", "aigerim", 2, 35),
        DemoJob(16, "10:30", "smoke-kazllm-flashattn", "aigerim", 2, 28),
    ]


def _model_b(j: list[DemoJob]) -> None:
    """Weeks 4-5: model B, a sweep and a preempted run."""
    b = CHAINS[1]
    # Weeks 4-5: model B (instruction tuning): a sweep, then the run, preempted once.
    for task in range(1, 5):
        j.append(
            DemoJob(
                22,
                "09:00",
                "hpo-kazllm-instruct-lr",
                "aigerim",
                2,
                58 + task * 3,
                wait=5 + 60 * ((task - 1) // 2),
                array=("41920", task),
            )
        )
    j += [
        DemoJob(23, "10:00", "smoke-kazllm-instruct", "aigerim", 2, 22, comment=_label("smoke", b)),
        DemoJob(
            23,
            "14:00",
            "ft-kazllm-instruct-train",
            "daniyar",
            8,
            30 * 60 + 5,
            wait=30,
            reason="Resources",
            requeue_after=6 * 60 + 12,
            comment=_label("train", b),
        ),
        DemoJob(
            25,
            "09:40",
            "eval-kazllm-instruct-mmlu",
            "olga",
            2,
            12,
            "FAILED",
            exit_code="137:0",
            comment=_label("eval", b),
        ),
        DemoJob(25, "10:30", "eval-kazllm-instruct-mmlu", "olga", 2, 97, comment=_label("eval", b)),
        # The team's GPU quota was used up by the sweep: the safety eval waits inside it.
        DemoJob(
            25,
            "12:30",
            "eval-kazllm-instruct-safety",
            "olga",
            1,
            63,
            wait=70,
            reason="QOSMaxGRESPerUser",
            comment=_label("eval", b),
        ),
        DemoJob(26, "09:00", "merge-kazllm-instruct", "daniyar", 1, 19, comment=_label("merge", b)),
        DemoJob(
            26, "09:30", "quantize-kazllm-gptq", "daniyar", 1, 74, comment=_label("quantize", b)
        ),
        DemoJob(
            26,
            "11:00",
            "export-kazllm-onnx",
            "daniyar",
            1,
            20,
            "CANCELLED by 1003",
            never_ran=True,
            wait=95,
            comment=_label("export", b),
        ),
        DemoJob(26, "13:00", "export-kazllm-onnx", "daniyar", 1, 17, comment=_label("export", b)),
    ]


def _week6(j: list[DemoJob]) -> None:
    """Week 6: an A/B evaluation and corpus deduplication."""
    # Week 6: an A/B evaluation and corpus deduplication with embeddings.
    j += [
        DemoJob(36, "10:00", "eval-kazllm-ab-test", "olga", 2, 140),
        DemoJob(37, "21:00", "embed-dedup-corpus", "timur", 4, 190),
        DemoJob(38, "21:00", "embed-dedup-corpus", "timur", 4, 175),
        DemoJob(38, "09:00", "tokenize-corpus", "timur", 0, 95),
    ]


def _model_c(j: list[DemoJob]) -> None:
    """Weeks 7-8: model C, a time limit and a resumed re-run."""
    c = CHAINS[2]
    # Weeks 7-8: model C, v2 data. The first run hits its time limit; the re-run resumes.
    j += [
        DemoJob(43, "10:00", "smoke-kazllm-v2", "aigerim", 2, 26, comment=_label("smoke", c)),
        DemoJob(
            43,
            "11:15",
            "smoke-kazllm-v2-packing",
            "aigerim",
            2,
            6,
            "CANCELLED by 1001",
            comment=_label("smoke", c),
        ),
        DemoJob(
            44,
            "09:00",
            "ft-kazllm-v2-train",
            "daniyar",
            8,
            24 * 60,
            "TIMEOUT",
            wait=60,
            reason="Resources",
            limit_h=24,
            comment=_label("train", c),
        ),
        DemoJob(
            45,
            "10:30",
            "ft-kazllm-v2-train",
            "daniyar",
            8,
            9 * 60 + 50,
            wait=180,
            reason="Resources",
            comment=_label("train", c),
        ),
        DemoJob(46, "08:00", "eval-kazllm-v2-mmlu", "olga", 2, 92, comment=_label("eval", c)),
        DemoJob(46, "10:00", "eval-kazllm-v2-safety", "olga", 1, 58, comment=_label("eval", c)),
        DemoJob(
            46, "11:30", "merge-kazllm-v2-adapter", "daniyar", 1, 23, comment=_label("merge", c)
        ),
        DemoJob(
            46, "12:10", "quantize-kazllm-v2-awq", "daniyar", 1, 71, comment=_label("quantize", c)
        ),
        DemoJob(
            46, "14:00", "export-kazllm-v2-gguf", "daniyar", 1, 16, comment=_label("export", c)
        ),
        DemoJob(
            47,
            "09:00",
            "export-kazllm-v2-safetensors",
            "daniyar",
            1,
            12,
            comment=_label("export", c),
        ),
        DemoJob(53, "18:00", "notebook-gpu-aigerim", "aigerim", 1, 125),
    ]


def _jobs() -> list[DemoJob]:
    j: list[DemoJob] = []
    for part in (_model_a, _weekly_eval, _week3, _model_b, _week6, _model_c):
        part(j)
    return j


def _ts(t: datetime | None) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S") if t else "Unknown"


def _dur(seconds: float) -> str:
    s = round(seconds)
    d, rem = divmod(s, 86400)
    h, rem = divmod(rem, 3600)
    m, sec = divmod(rem, 60)
    return (f"{d}-" if d else "") + f"{h:02d}:{m:02d}:{sec:02d}"


def _tres(gpus: int) -> tuple[str, str]:
    cpus = max(gpus, 1) * 16
    mem = max(gpus, 1) * 128000
    gres = f"gres/gpu:h100={gpus},gres/gpu={gpus}," if gpus else ""
    return (
        f"billing={cpus},cpu={cpus},{gres}mem={mem}M,node=1",
        f"cpu={cpus},{gres}mem={mem}M,node=1",
    )


def sacct_log() -> str:
    """The demo's 8-week `sacct --parsable2` output (header, jobs, steps)."""
    lines = [RECOMMENDED_FIELDS.replace(",", "|")]
    ends: dict[int, datetime] = {}
    jobs = _jobs()
    order = sorted(range(len(jobs)), key=lambda i: (jobs[i].day, jobs[i].at, i))
    for seq, i in enumerate(order):
        job = jobs[i]
        hh, mm = (int(x) for x in job.at.split(":"))
        submit = WEEK1 + timedelta(days=job.day, hours=hh, minutes=mm)
        eligible = submit + timedelta(days=job.begin_days)
        reason = "BeginTime" if job.begin_days else job.reason
        if job.after is not None:
            eligible = ends[job.after]
            reason = "Dependency"
        start = eligible + timedelta(minutes=job.wait)
        raw_id = str(FIRST_ID + seq)
        job_id = f"{job.array[0]}_{job.array[1]}" if job.array else raw_id
        if job.array:
            reason = "JobArrayTaskLimit" if job.array[1] > 2 else "None"
        node = "None assigned" if job.never_ran else f"kz-gpu-{(seq % 4) + 1:02d}"
        alloc, step_tres = _tres(job.gpus)
        priority = str(4294901000 - seq)
        limit = _dur(job.limit_h * 3600)
        fixed = f"{job.name}|{job.user}|{ACCOUNT}|gpu|normal"
        attempts: list[tuple[datetime, datetime, datetime, str, str]] = []
        if job.requeue_after is not None:
            stop = start + timedelta(minutes=job.requeue_after)
            attempts.append((submit, start, stop, "REQUEUED", reason))
            resubmit = stop
            restart = resubmit + timedelta(minutes=12)
            end = restart + timedelta(minutes=job.minutes - job.requeue_after)
            attempts.append((resubmit, restart, end, job.state, "BeginTime"))
        else:
            end = start + timedelta(minutes=job.minutes)
            attempts.append((submit, start, end, job.state, reason))
        ends[i] = attempts[-1][2]
        if job.never_ran:
            cancel = start
            lines.append(
                f"{job_id}|{raw_id}|{fixed}|0|{job.state}|0:0|JobHeldUser|{_ts(submit)}|Unknown|"
                f"None|{_ts(cancel)}|00:00:00|{limit}||{alloc}|{node}|{job.comment}"
            )
            continue
        for sub, st, en, state, why in attempts:
            elapsed = _dur((en - st).total_seconds())
            elig = eligible if sub == submit else sub + timedelta(minutes=12)
            lines.append(
                f"{job_id}|{raw_id}|{fixed}|{priority}|{state}|{job.exit_code}|{why}|"
                f"{_ts(sub)}|{_ts(elig)}|{_ts(st)}|{_ts(en)}|{elapsed}|{limit}|{alloc}|{alloc}|"
                f"{node}|{job.comment}"
            )
            batch_state = {
                "TIMEOUT": "CANCELLED",
                "REQUEUED": "CANCELLED",
                "NODE_FAIL": "CANCELLED",
            }.get(state, state.split()[0])
            batch_exit = "0:15" if batch_state == "CANCELLED" else job.exit_code
            common = f"{_ts(st)}|{_ts(st)}|{_ts(st)}|{_ts(en)}|{elapsed}|"
            lines.append(
                f"{job_id}.batch|{raw_id}.batch|batch||{ACCOUNT}||||{batch_state}|{batch_exit}||"
                f"{common}|{step_tres}||{node}|"
            )
            lines.append(
                f"{job_id}.extern|{raw_id}.extern|extern||{ACCOUNT}||||COMPLETED|0:0||"
                f"{common}|{alloc}||{node}|"
            )
            if job.gpus >= 2:
                lines.append(
                    f"{job_id}.0|{raw_id}.0|torchrun||{ACCOUNT}||||{batch_state}|{batch_exit}||"
                    f"{common}|{step_tres}||{node}|"
                )
    return "\n".join(lines) + "\n"


def _safetensors(tensors: dict[str, tuple[str, list[int]]]) -> bytes:
    """A valid safetensors file of zero-filled tensors (dtype, shape) per name."""
    sizes = {"BF16": 2, "F32": 4}
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, (dtype, shape) in tensors.items():
        n = sizes[dtype]
        for d in shape:
            n *= d
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + n]}
        offset += n
    blob = json.dumps(header, separators=(",", ":")).encode()
    blob += b" " * (-len(blob) % 8)  # the reference writer pads the header to 8 bytes
    return struct.pack("<Q", len(blob)) + blob + bytes(offset)


def write_export(data: Path = EXPORT_DATA) -> Path:
    """Write the vendor's export and the answered retention.yaml under `data` (the package)."""
    export = data / "vendor-run-7"
    adapter = {
        "peft_type": "LORA",
        "base_model_name_or_path": "kaz-llm/kazllm-8b-instruct",
        "revision": None,
        "r": 16,
        "lora_alpha": 32,
        "target_modules": ["q_proj", "v_proj"],
        "task_type": "CAUSAL_LM",
    }
    atomic_write_text(export / "adapter_config.json", json.dumps(adapter, indent=2) + "\n")
    layers = {
        f"base_model.model.layers.{i}.self_attn.{p}_proj.lora_{ab}.weight": (
            "BF16",
            [16, 64] if ab == "A" else [64, 16],
        )
        for i in range(2)
        for p in ("q", "v")
        for ab in ("A", "B")
    }
    atomic_write_bytes(export / "adapter_model.safetensors", _safetensors(layers))
    state = {
        "global_step": 1800,
        "epoch": 3.0,
        "log_history": [{"step": 1800, "eval_loss": 1.21, "epoch": 3.0}],
    }
    atomic_write_text(export / "trainer_state.json", json.dumps(state, indent=2) + "\n")
    atomic_write_bytes(
        export / "vendor_state.vpk", b"VPK\x02" + bytes((i * 37) % 251 for i in range(4096))
    )
    atomic_write_text(
        export / "README.md", "Exported by the vendor's console, run 7. Load with vendor-sdk.\n"
    )
    atomic_write_text(data / "retention.yaml", _answered_retention())
    return export


RETENTION_ANSWERS = {
    "retention_owner": "Head of ML platform; approved by the CISO (policy ML-RET-2)",
    "key_access": "Bank HSM admins only; the vendor never sees the key (contract 4.2)",
    "key_custody": "team",
}


def _answered_retention() -> str:
    text = workspace.template_files()["retention.yaml"]
    for key, answer in RETENTION_ANSWERS.items():
        text = text.replace(f"  {key}: null", f"  {key}: {json.dumps(answer)}")
    return text


HYBRID_DATA = Path(__file__).resolve().parent.parent / "src/gpudecide/decision/demo_data"
IMAGE = "registry.dala.kz/ml/train@sha256:" + "3f" * 32


def write_hybrid(data: Path = HYBRID_DATA) -> Path:
    """The demo hybrid's two contours: a run manifest of each and hybrid.yaml.

    Both contours run the same image and checkpoint format; their evaluation contracts
    differ in the prompt version (the provider's side was not updated), a finding.
    """
    from gpudecide.artifacts.manifest import RunManifest

    for option, run_id in (("kz-rented-2gpu", "eval-r3-local"), ("kz-local", "ft-r3-provider")):
        manifest = RunManifest(
            run_id=run_id,
            base_model="kaz-llm/kazllm-8b-instruct@sha256:" + "9c" * 32,
            dataset_snapshot="s3://dala-ml/datasets/kk-instruct@v2026-06-01",
            code_commit="4e1f0c9a7b2d3e5f60718293a4b5c6d7e8f90a1b",
            container_digest=IMAGE,
            precision="bf16",
            method="lora",
            checkpoint_format="safetensors",
            optimizer_state_exported=True,
            created_at_utc="2026-07-20T08:00:00Z",
            retention_class="regulated-3y",
        )
        atomic_write_text(data / "runs" / option / "run-manifest.json", manifest.to_json())
    contract = {
        "test_set_sha256": "5d" * 32,
        "thresholds": {"mmlu_kk": 0.62, "toxicity_max": 0.01},
        "publishing_rule": "the ML lead publishes when every threshold holds on both contours",
    }
    spec = {
        "version": 1,
        "hybrids": [
            {
                "option": "hybrid-kz",
                "boundary": {
                    "crosses": ["LoRA adapter weights", "evaluation metrics"],
                    "approved_by": "Head of ML platform (change ticket per crossing)",
                    "evaluated_on": ["kz-rented-2gpu"],
                },
                "contours": [
                    {
                        "option": option,
                        "manifest": f"runs/{option}/run-manifest.json",
                        "evaluation": {**copy.deepcopy(contract), "prompt_versions": [prompts]},
                    }
                    for option, prompts in (
                        ("kz-rented-2gpu", "eval-prompts-v3"),
                        ("kz-local", "eval-prompts-v2"),
                    )
                ],
            }
        ],
    }
    header = "# The demo's hybrid: a local 2-GPU pool and the local provider's trainings.\n"
    atomic_write_text(data / "hybrid.yaml", header + yaml.safe_dump(spec, sort_keys=False))
    return data


def write_kz_local_export() -> Path:
    """The local provider's export of run 12, with its full state (the portability demo)."""
    from gpudecide.portability.demo import make_export

    return make_export()


# --- the lifecycle marks of the demo's jobs (gpudecide.queue.demo) ---------------------------
# The team's scripts call gpudecide.marks (prep_start, first_step, checkpoint, end): every
# job but the scheduled evaluation of the production model (its script predates the marks)
# and the notebook (no training loop) wrote them, on the node it ran on.
_MARKS_UNMARKED = ("eval-prod-weekly", "notebook-")
# By the job name's first word: (minutes to the first step, lo-hi; minutes between
# checkpoints, None: the job keeps none; steps a minute).
_MARKS_PROFILE: dict[str, tuple[tuple[float, float], float | None, float]] = {
    "ft": ((6.0, 9.0), 30.0, 24.0),
    "smoke": ((2.0, 4.0), 10.0, 30.0),
    "hpo": ((3.0, 5.0), 15.0, 30.0),
    "eval": ((3.0, 5.0), None, 40.0),
    "merge": ((1.0, 2.5), None, 1.0),
    "quantize": ((1.5, 3.0), None, 2.0),
    "export": ((1.0, 2.0), None, 1.0),
    "embed": ((2.0, 4.0), 30.0, 60.0),
}
# Jobs that failed before their first step (a crash while the model loaded).
_MARKS_NO_FIRST_STEP = ("41893",)
# A run that continues the steps of an earlier one: requeued attempts resume from their own
# checkpoints; 41910 resumed 41909 (timeout) from shared storage. 41875, the re-run after the
# node failure, started from zero: 41874 kept its checkpoints on the lost node's local disk.
_MARKS_RESUMES = {"41910": "41909"}
_MARKS_LOCAL_DISK = ("41874",)
_MARKS_CLUSTER = "dala-ml"


def _marks_stamp(at: datetime) -> str:
    return at.isoformat(timespec="microseconds").replace("+00:00", "Z")


def _marks_raw_ids(log: str) -> dict[str, str]:
    """JobID -> JobIDRaw of each job line of the sacct log (an array task has its own)."""
    out: dict[str, str] = {}
    for line in log.splitlines()[1:]:
        fields = line.split("|")
        if "." not in fields[0]:
            out[fields[0]] = fields[1]
    return out


class _MarksRun:
    """The marks one training process writes: its identity and its lines, numbered."""

    def __init__(self, ident: dict[str, object], pid: int, run: str) -> None:
        self.ident = ident
        self.tail: dict[str, object] = {"rank": 0, "pid": pid, "run": run}
        self.lines: list[dict[str, object]] = []

    def mark(self, kind: str, at: datetime, **fields: object) -> None:
        from gpudecide.marks.writer import SCHEMA_VERSION

        record = {"v": SCHEMA_VERSION, "kind": kind, "at": _marks_stamp(at), **fields}
        self.lines.append({**record, **self.ident, **self.tail, "seq": len(self.lines) + 1})


def _marks_of(row: dict[str, object], raw: str, step0: int) -> tuple[_MarksRun, int]:
    """The marks of one attempt of the log, and the step it got to."""
    import random

    name, start, end = str(row["name"]), row["start"], row["end"]
    assert isinstance(start, datetime) and isinstance(end, datetime)
    (lo, hi), every, rate = _MARKS_PROFILE[name.split("-", 1)[0]]
    job_id, attempt = str(row["job_id"]), int(str(row["attempt"]))
    rng = random.Random(f"{job_id}/{attempt}")
    node = json.loads(str(row["extras"]))["node"]
    ident: dict[str, object] = {"slurm_job_id": raw}
    if row["array_job_id"]:
        ident["slurm_array_job_id"] = row["array_job_id"]
        ident["slurm_array_task_id"] = job_id.split("_", 1)[1]
    ident.update(slurm_restart_count=attempt - 1, cluster=_MARKS_CLUSTER, host=node, node=node)
    run = _MarksRun(ident, rng.randint(2000, 60000), f"{rng.getrandbits(64):016x}")
    run.mark("prep_start", start + timedelta(seconds=rng.uniform(15, 50)))
    first = start + timedelta(minutes=rng.uniform(lo, hi))
    if job_id in _MARKS_NO_FIRST_STEP or first >= end:
        run.mark("end", end - timedelta(seconds=rng.uniform(2, 6)), status="failed")
        return run, step0
    run.mark("first_step", first, step=step0 + 1)
    folder = "/local/scratch" if job_id in _MARKS_LOCAL_DISK else "/shared/ckpt"
    label = str(row["chain_id"] or name).removeprefix("ft-")
    step = step0
    if every is not None:
        at = first + timedelta(minutes=every, seconds=rng.uniform(20, 90))
        saves = []
        while at < end - timedelta(minutes=1):
            saves.append(at)
            at += timedelta(minutes=every, seconds=rng.uniform(20, 90))
        if row["state"] == "completed":  # the trainer saves once more at the end
            saves.append(end - timedelta(seconds=rng.uniform(30, 50)))
        for at in saves:
            step = step0 + round((at - first).total_seconds() / 60 * rate)
            run.mark("checkpoint", at, step=step, path=f"{folder}/{label}/checkpoint-{step}")
    # A job that ended by itself says how; a lost node, a time limit or a requeue kills the
    # process before it can.
    if row["state"] in ("completed", "failed"):
        run.mark("end", end - timedelta(seconds=rng.uniform(2, 6)), status=row["state"])
    return run, step


def queue_marks(log_path: Path = LOG_DATA) -> dict[str, str]:
    """The marks JSONL of the demo log's jobs, file name -> text, in the writer's format
    (`gpudecide.marks.writer`: one object a line, its identity as Slurm's variables give
    it, rank 0), from the log's own job ids and times."""
    from gpudecide.jobs.load import LogSpec, load_logs
    from gpudecide.marks.writer import file_name

    raw = _marks_raw_ids(log_path.read_text(encoding="utf-8"))
    log = load_logs([LogSpec(log_path, "sacct")], tz="Asia/Almaty")
    rows = [r for r in log.attempts.to_pylist() if r["start"] is not None]
    files: dict[str, list[str]] = {}
    last_step: dict[str, int] = {}
    for row in sorted(rows, key=lambda r: r["start"]):
        if row["end"] is None or not row["gpu_count"] or row["name"].startswith(_MARKS_UNMARKED):
            continue
        job_id = row["job_id"]
        before = job_id if row["attempt"] > 1 else _MARKS_RESUMES.get(job_id, "")
        run, last_step[job_id] = _marks_of(row, raw[job_id], last_step.get(before, 0))
        files.setdefault(file_name(run.ident), []).extend(_marks_json(run.lines))
    # The node 41874 ran on failed while it wrote its last mark: the line is cut short.
    lost = next(n for n in files if n.startswith("41874."))
    files[lost][-1] = files[lost][-1][: len(files[lost][-1]) // 2]
    # A job that ran after the log was exported: its marks name a job the log does not list.
    late = datetime(2026, 7, 27, 4, 2, tzinfo=UTC)
    node = "kz-gpu-02"
    ident = {"slurm_job_id": "41921", "slurm_restart_count": 0, "cluster": _MARKS_CLUSTER}
    run = _MarksRun({**ident, "host": node, "node": node}, 4242, "5f0c1d2e3a4b5c6d")
    run.mark("prep_start", late)
    run.mark("first_step", late + timedelta(minutes=3, seconds=11), step=1)
    files[file_name(run.ident)] = _marks_json(run.lines)
    return {name: "".join(lines) for name, lines in sorted(files.items())}


def _marks_json(lines: list[dict[str, object]]) -> list[str]:
    return [json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in lines]


def write_queue_marks(data: Path | None = None) -> Path:
    """Write the demo's marks folder (`gpudecide.queue.demo.MARKS_DATA`) from the log."""
    from gpudecide.queue.demo import MARKS_DATA

    target = data or MARKS_DATA
    target.mkdir(parents=True, exist_ok=True)
    for stale in target.glob("*.jsonl"):
        stale.unlink()
    for name, body in queue_marks().items():
        atomic_write_text(target / name, body)
    return target


def main() -> int:
    """Write every demo data file."""
    LOG_DATA.write_text(sacct_log(), encoding="utf-8")
    print(f"wrote {LOG_DATA}")
    export = write_export()
    print(f"wrote {export}")
    print(f"wrote {write_hybrid()}")
    print(f"wrote {write_kz_local_export()}")
    print(f"wrote {write_queue_marks()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
