"""Kubernetes, SageMaker and OpenAI-style job sources, against the values their documented
shapes imply (tests/fixtures/*/EXPECTED.md)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gpudecide.errors import InputError
from gpudecide.jobs.load import detect_format, load_logs
from gpudecide.queue.analysis import QueueOptions, analyse_queue

from .conftest import FIXTURES

K8S = FIXTURES / "kubernetes"
SM = FIXTURES / "managed" / "sagemaker"
OAI = FIXTURES / "managed" / "openai"


def _rows(paths: list[Path]) -> dict[tuple[str, int], dict[str, Any]]:
    log = load_logs(paths)
    return {(r["job_id"], r["attempt"]): r for r in log.attempts.to_pylist()}


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def test_detect_formats() -> None:
    assert detect_format(K8S / "pods.json") == "kubernetes"
    assert detect_format(K8S / "events.json") == "kubernetes-events"
    assert detect_format(SM / "ft-qwen-lora-g5-20260727-0412.cli.json") == "sagemaker"
    assert detect_format(OAI / "ftjob-jUg0E3kS6VbsQ9HPEr9WQYnW.json") == "openai"
    assert detect_format(OAI / "ftjob-jUg0E3kS6VbsQ9HPEr9WQYnW.events.json") == "openai-events"


def test_each_json_log_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # Detecting a JSON source parses it; the reader takes that document instead of parsing
    # the file again (a 30 MB sacct --json: 6.0 s -> 4.1 s with --format auto).
    from collections import Counter

    from gpudecide import jsonio
    from gpudecide.jobs import kubernetes, load, managed, slurm_json

    parsed: Counter[Path] = Counter()

    def counting(path: Path, *args: Any, **kwargs: Any) -> Any:
        parsed[Path(path)] += 1
        return jsonio.read_json(path, *args, **kwargs)

    for module in (load, kubernetes, managed, slurm_json):
        monkeypatch.setattr(module, "read_json", counting)
    oai = OAI / "ftjob-jUg0E3kS6VbsQ9HPEr9WQYnW.json"
    paths = [
        K8S / "pods.json",
        K8S / "events.json",
        SM / "ft-qwen-lora-g5-20260727-0412.cli.json",
        oai,
        oai.with_name(oai.name.replace(".json", ".events.json")),
        FIXTURES / "sacct" / "pair.sacct.json",
    ]
    assert load_logs(paths).attempts.num_rows > 0
    assert parsed == Counter(paths)


def test_kubernetes_pods_with_events() -> None:
    rows = _rows([K8S / "pods.json", K8S / "events.json"])
    first, second = rows[("ft-llama-r1", 1)], rows[("ft-llama-r1", 2)]
    assert first["submit"] == utc("2026-07-28T06:00:03Z") == first["eligible"]
    assert first["start"] == utc("2026-07-28T07:41:52.130551Z")  # the Scheduled event (us)
    assert first["prep_start"] == utc("2026-07-28T07:41:53Z")
    assert first["end"] == utc("2026-07-28T09:12:37Z")
    assert (first["state"], first["state_detail"], first["exit_code"]) == (
        "failed",
        "Failed: OOMKilled",
        "137",
    )
    assert "Insufficient nvidia.com/gpu" in first["wait_reason"]
    assert first["gpu_count"] == 8 and first["priority_class"] == "ml-train"
    assert (first["kind_label"], first["chain_id"]) == ("train", "llama-r1")
    assert second["state"] == "completed" and second["submit"] == utc("2026-07-28T09:12:49Z")
    assert first["first_step"] is None  # not observable from pods or events
    preempted = rows[("ft-qwen-r3", 1)]
    assert (
        preempted["state"] == "preempted" and "PreemptionByScheduler" in preempted["state_detail"]
    )
    pending = rows[("ft-qwen-r3", 2)]
    assert pending["state"] == "pending" and pending["start"] is None
    assert pending["gpu_count"] is None and pending["req_gpus"] == 4
    cpu = rows[("prep-llama-r1-data", 1)]
    assert cpu["gpu_count"] == 0 and cpu["kind_label"] is None
    # its events expired: the node assignment comes from the condition, in whole seconds
    quant = rows[("quant-llama-r0", 1)]
    assert quant["start"] == utc("2026-07-26T21:14:05Z")


def test_kubernetes_missing_events_are_said() -> None:
    log = load_logs([K8S / "pods.json", K8S / "events.json"])
    assert any("1 of 8 pod(s) have no events" in n for n in log.notes)
    alone = load_logs([K8S / "pods.json"])
    assert any("no events file given" in n for n in alone.notes)
    row = {(r["job_id"], r["attempt"]): r for r in alone.attempts.to_pylist()}
    # without events the wait reason of the finished wait is lost; the open one is in the pod
    assert row[("ft-llama-r1", 1)]["wait_reason"] is None
    assert "Insufficient" in row[("ft-qwen-r3", 2)]["wait_reason"]


def test_kubernetes_queue_waits() -> None:
    log = load_logs([K8S / "pods.json", K8S / "events.json"])
    f = analyse_queue(log, QueueOptions(as_of=utc("2026-07-29T15:30:00Z")))
    jobs = {j["job_id"]: j for j in f["jobs"]}
    # attempt 1 waited 1 h 41 m 49.13 s, attempt 2 0.40 s
    assert jobs["ft-llama-r1"]["queue_wait_s"] == pytest.approx(6109.1 + 0.4, abs=0.11)
    assert jobs["ft-qwen-r3"]["still_waiting"] is True
    assert jobs["ft-qwen-r3"]["queue_wait_s"] == pytest.approx(0.9 + 7783, abs=0.11)
    assert f["summary"]["wait_by_category_s"]["capacity"] > 6000
    (chain,) = [c for c in f["chains"] if c["chain"] == "llama-r1"]
    assert chain["first_submit"] == "2026-07-28T05:40:00Z"
    assert chain["finished_at"] == "2026-07-28T23:02:19Z"


def test_sagemaker_capacity_waits_and_spot_attempts() -> None:
    rows = _rows(sorted(SM.glob("*.json")))
    p5 = rows[("ft-llama-r1-p5-20260728-0140", 1)]
    assert p5["submit"] == utc("2026-07-28T01:40:12.345Z")
    assert (p5["start"] - p5["eligible"]).total_seconds() == pytest.approx(15515.557)
    assert p5["gpu_count"] == 8 and p5["gpu_type"] == "h100" and p5["state"] == "completed"
    spot = [rows[("ft-qwen-r3-spot-p4d-20260729-0300", n)] for n in (1, 2, 3)]
    assert [a["state"] for a in spot] == ["preempted", "preempted", "timeout"]
    waits = sum((a["start"] - a["eligible"]).total_seconds() for a in spot)
    assert waits == pytest.approx(15429.120)  # every Starting phase
    assert spot[2]["state_detail"] == "Stopped/MaxWaitTimeExceeded"
    failed = rows[("ft-llama-r2-p5x2-20260729-0815", 1)]
    assert failed["start"] is None and failed["gpu_count"] is None and failed["req_gpus"] == 16
    assert (failed["end"] - failed["eligible"]).total_seconds() == pytest.approx(3742.419)
    assert "CapacityError" in failed["state_detail"]
    g5 = rows[("ft-qwen-lora-g5-20260727-0412", 1)]
    assert g5["start"] == utc("2026-07-27T04:15:41.604Z") and g5["gpu_count"] == 1


def test_openai_jobs_with_events() -> None:
    jobs = sorted(p for p in OAI.glob("ftjob-*.json") if not p.name.endswith(".events.json"))
    rows = _rows(jobs)
    ok = rows[("ftjob-jUg0E3kS6VbsQ9HPEr9WQYnW", 1)]
    assert (ok["start"] - ok["eligible"]).total_seconds() == 4993
    assert (ok["eligible"] - ok["submit"]).total_seconds() == 158
    assert ok["first_step"] == utc("2026-07-27T11:31:13Z") and ok["gpu_count"] is None
    assert (ok["kind_label"], ok["chain_id"], ok["state"]) == ("train", "support-r1", "completed")
    failed = rows[("ftjob-WS9VuvdtIoydHiTw8VGTclan", 1)]
    assert failed["eligible"] is None and failed["state_detail"] == "failed: invalid_n_examples"
    queued = rows[("ftjob-blBmPnCerKOhePhYghrRtjTk", 1)]
    assert queued["state"] == "pending" and queued["start"] is None
    f = analyse_queue(load_logs(jobs), QueueOptions(as_of=utc("2026-07-29T15:30:00Z")))
    waits = {j["job_id"]: j for j in f["jobs"]}
    assert waits["ftjob-ktViKlEDQey9lNs9n6gwI44R"]["queue_wait_s"] == 4165
    assert waits["ftjob-blBmPnCerKOhePhYghrRtjTk"]["queue_wait_s"] == 1949
    assert waits["ftjob-jUg0E3kS6VbsQ9HPEr9WQYnW"]["startup_s"] == 11


def test_bad_json_sources(tmp_path: Path) -> None:
    bad = tmp_path / "pods.json"
    bad.write_text('{"kind": "List",\n "items": [\n')
    with pytest.raises(InputError) as exc:
        load_logs([bad])
    assert exc.value.path == str(bad) and exc.value.line == 3 and "JSON" in exc.value.message
    doc = json.loads((K8S / "pods.json").read_text())
    doc["items"][2]["metadata"]["annotations"]["gpudecide.io/kind"] = "training"
    bad.write_text(json.dumps(doc))
    with pytest.raises(InputError) as exc:
        load_logs([bad])
    assert exc.value.field == "items[2].metadata.annotations.gpudecide.io/kind"
    other = tmp_path / "x.json"
    other.write_text('{"hello": 1}')
    with pytest.raises(InputError, match="no known job source"):
        load_logs([other])
