"""Drill storage-revoked: the storage really refuses the job mid-run (SPEC G4, E3).

Local folder (the default): the storage folder becomes read-only for the job, a permission
the process really lacks (as root, the job runs without the capabilities that bypass file
modes). `s3://BUCKET/PREFIX`: a local S3 API server (moto_server) with IAM authentication
on; the job user's policy is deleted, so its next upload gets 403 AccessDenied.

The job must retry with back-off, report the denial clearly and stop without losing its last
good checkpoint; after the rollback (access given back) it resumes from that checkpoint. The
negative twin runs the job with no retries: the back-off check fails.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from gpudecide.drills import runner
from gpudecide.drills.faults import FaultUnsupported, LocalRevocation, MotoS3
from gpudecide.drills.job import EXIT_DENIED, now_iso
from gpudecide.drills.journal import Journal, Probe, always, rollbacks
from gpudecide.drills.names import NODE_LOCAL
from gpudecide.drills.runner import DrillContext, DrillResult, last, steps_of
from gpudecide.errors import InputError
from gpudecide.message import Message, message, nmessage

__all__ = [
    "BACKOFF_S",
    "RETRIES",
    "REVOKE_PACE_S",
    "run",
]

RETRIES = 3
BACKOFF_S = 0.1
REVOKE_PACE_S = 0.08


class _Access:
    """Revoke / restore access to the drill's storage, local or S3."""

    def __init__(self, ctx: DrillContext, run_dir: Path) -> None:
        self.ctx = ctx
        self.s3 = (ctx.storage or "").startswith("s3://")
        self.moto: MotoS3 | None = None
        self.local: LocalRevocation | None = None
        self.url = ctx.storage_url(run_dir)

    def setup(self) -> str:
        if not self.s3:
            assert self.url is not None
            if os.geteuid() == 0 and shutil.which("setpriv") is None:
                raise FaultUnsupported(
                    message(
                        "drills",
                        "running as root, which ignores file permissions, and setpriv "
                        "(util-linux) is missing to run the job without CAP_DAC_OVERRIDE",
                    )
                )
            Path(self.url, "run").mkdir(parents=True, exist_ok=True)
            self.local = LocalRevocation(Path(self.url))
            return f"local folder {self.url}"
        bucket = (self.ctx.storage or "")[5:].split("/")[0]
        self.moto = MotoS3(bucket)
        try:
            out = self.moto.start()
        except FaultUnsupported:
            raise
        except Exception as exc:  # the S3 API's refusal of the set-up (a bad bucket name)
            raise InputError(
                "cannot set up the S3 drill: {reason}",
                field="--storage",
                hint="s3://BUCKET/PREFIX with a valid bucket name (3-63 characters)",
                reason=str(exc),
            ) from None
        self.ctx.storage_options = self.moto.options()
        return out

    @property
    def exercised_url(self) -> str | None:
        """The storage the job really wrote to: on S3 the local server's own URL of the
        bucket (path-style), never the s3:// name of a bucket it is not."""
        if self.moto is None or not self.moto.url or self.url is None:
            return self.url
        return f"{self.moto.url}/{self.url[5:].strip('/')}"

    def revoke(self) -> str:
        return self.moto.revoke() if self.moto else self.local.revoke()  # type: ignore[union-attr]

    def restore(self) -> str:
        if self.moto is not None:
            return self.moto.restore()
        return self.local.restore() if self.local else "nothing revoked"

    def stop(self) -> str:
        return self.moto.stop() if self.moto else "local folder: nothing to stop"


def run(ctx: DrillContext, *, retries: int = RETRIES) -> DrillResult:
    """Run the drill; `retries=0` is the negative twin."""
    run_dir = ctx.root / ("storage-revoked" if retries else "storage-revoked-no-retry")
    if ctx.storage == NODE_LOCAL:
        return runner.without_external_storage("storage-revoked", run_dir)
    j = runner.new_journal(
        "storage-revoked",
        "Storage access revoked mid-run",
        "The external storage starts refusing the job (403 / permission denied).",
        "the job retries with back-off, reports the denial and keeps its last good checkpoint",
    )
    access = _Access(ctx, run_dir)
    job = resumed_job = None
    first: list[dict[str, Any]] = []
    second: list[dict[str, Any]] = []
    revoked_at = None
    rc: int | None = None
    try:
        with j.activity("action", "prepare storage") as rec:
            try:
                rec["output"] = access.setup()
            except FaultUnsupported as exc:
                rec["output"] = str(exc)
                return runner.cannot_inject(j, "storage-revoked", run_dir, exc.said)
        assert access.url is not None
        j.steady("before", [runner.storage_probe(ctx, access.url)])
        with j.activity("action", "train until a checkpoint is stored, then revoke") as rec:
            # A slower pace leaves time to revoke between two checkpoint uploads.
            spec = runner.job_spec(
                ctx,
                run_dir,
                "train",
                run_dir / "node-a",
                retries=retries,
                backoff_s=BACKOFF_S,
                pace_s=max(ctx.pace_s, REVOKE_PACE_S),
            )
            files = runner.write_job(run_dir, "train", spec)
            job = runner.submit(ctx, files, drop_dac=not access.s3) if ctx.executor == "local" \
                else runner.submit(ctx, files)  # fmt: skip
            runner.wait_for(files, job, lambda ev: bool(steps_of(ev, "uploaded")), ctx.timeout_s)
            rec["output"] = access.revoke()
            revoked_at = now_iso()
        j.fault = {"type": "access revoked", "at": revoked_at, "storage": access.url}
        with j.activity("probe", "wait for the job's answer") as rec:
            rc = job.wait(ctx.timeout_s).returncode
            first = files.events_now()
            rec["output"] = {"returncode": rc}
        always(j, "give access back", access.restore)
        with j.activity("action", "resume from external storage") as rec:
            files2 = runner.write_job(
                run_dir, "resume", runner.job_spec(ctx, run_dir, "resume", run_dir / "node-b")
            )
            resumed_job = runner.submit(ctx, files2)
            rec["output"] = {"returncode": resumed_job.wait(ctx.timeout_s).returncode}
            second = files2.events_now()
        result = _judge(ctx, j, run_dir, access, rc, first, second, retries)
    finally:
        with rollbacks():
            always(j, "give access back", access.restore)
            always(j, "stop the jobs", lambda: [runner.cancel(job), runner.cancel(resumed_job)])
            always(j, "stop the storage server", access.stop)
    j.write(result.journal, result.as_dict())
    return result


def _judge(
    ctx: DrillContext,
    j: Journal,
    run_dir: Path,
    access: _Access,
    returncode: int | None,
    first: list[dict[str, Any]],
    second: list[dict[str, Any]],
    retries: int,
) -> DrillResult:
    denied = [e for e in first if e["event"] == "upload_denied"]
    gave_up = last(first, "storage_denied")
    stored = steps_of(first, "uploaded")
    good = stored[-1] if stored else 0
    waits = [e["retry_in_s"] for e in denied if e.get("retry_in_s")]
    backed_off = bool(waits) and len(denied) == len(waits) + 1 and waits == sorted(set(waits))
    resumed = last(second, "resumed")
    finished = last(second, "finished")
    after = [
        runner.verify_stored(runner.open_store(ctx, access.url or ""), good, run_dir / "verify")
    ]
    after.append(Probe("resumed job finished", finished is not None))
    j.steady("after", after)
    for e in denied:
        j.observe(f"upload attempt {e['attempt']} denied", e["error"])
    noticed = returncode == EXIT_DENIED and gave_up is not None and bool(denied)
    from_step = int(resumed["step"]) if resumed else 0
    kept = bool(stored) and after[0].ok and from_step == good and finished is not None
    explained = noticed and backed_off and ("denied" in denied[0]["error"] if denied else False)
    step_at_stop = max(steps_of(first, "step") or [0])
    backoff = ", ".join(f"{w:g}" for w in waits) or "none"
    error = denied[0]["error"] if denied else "-"
    # The English status quotes the storage's own error line; the message names the denial
    # by where it happened and the storage's code, so no system text reaches ru/kk readers.
    status = (
        f"storage refused checkpoint uploads ({len(denied)} attempts, back-off {backoff} s): "
        f"{error}; stopped at step {step_at_stop}; resumed from checkpoint-{from_step}"
    )
    said = nmessage(
        "drills",
        "storage refused checkpoint uploads ({n} attempt, back-off {backoff} s): {error}; "
        "stopped at step {step}; resumed from checkpoint-{good}",
        "storage refused checkpoint uploads ({n} attempts, back-off {backoff} s): {error}; "
        "stopped at step {step}; resumed from checkpoint-{good}",
        n=len(denied),
        backoff=_numbers(waits) if waits else message("drills", "none"),
        error=_denial(denied[0]) if denied else "-",
        step=step_at_stop,
        good=from_step,
    )
    return DrillResult(
        drill="storage-revoked",
        status_message=said,
        status_text=status,
        verdict=runner.verdict_of(noticed, kept, explained),
        noticed=noticed,
        data_kept=kept,
        explained=explained,
        resumed_from_step=from_step,
        lost_steps=step_at_stop - from_step,
        lost_seconds=runner.seconds_between(
            runner.step_time(first, from_step), gave_up["at"] if gave_up else None
        ),
        journal=run_dir / "journal.json",
        storage_url=access.exercised_url,
        details={
            "retried_with_backoff": backed_off,
            "attempts": len(denied),
            "storage_kind": "s3" if access.s3 else "local folder",
        },
    )


def _denial(event: dict[str, Any]) -> Message | str:
    """The first denial as a message: where and the storage's own code (EACCES,
    AccessDenied); an event without them (an older job) as the job wrote it."""
    if event.get("target") and event.get("code"):
        return message(
            "drills", "access denied at {target} ({code})", target=event["target"],
            code=event["code"],
        )  # fmt: skip
    return str(event["error"])


def _numbers(values: list[float]) -> Message:
    """Numbers in the reader's digits, joined by the language's list separator (", " in
    English; "; " where the decimal sign is a comma)."""
    said = message("drills", "{v:num}", v=values[-1])
    for value in reversed(values[:-1]):
        said = message("drills", "{first:num}, {rest}", first=value, rest=said)
    return said
