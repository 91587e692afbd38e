"""The export test with `s3://` storage against a real S3 HTTP API server (moto_server on
127.0.0.1, started by the fixture of tests/test_artifacts_s3.py), read and written by s3fs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gpudecide.portability.executors import LocalExecutor
from gpudecide.portability.plan import ExportTestPlan
from gpudecide.portability.scenario import ExportTestSetup, run_export_test
from gpudecide.portability.storage import open_storage

from .test_artifacts_s3 import s3  # noqa: F401 (the moto_server fixture, reused)
from .test_portability_scenario import IDENTITY, MODEL


@pytest.fixture(scope="module")
def executor() -> Iterator[LocalExecutor]:
    ex = LocalExecutor(timeout=300, warm=True)
    yield ex
    ex.close()


def _options(url: str) -> dict[str, object]:
    return {"endpoint_url": url, "key": "testing", "secret": "testing", "skip_instance_cache": True}


def test_storage_round_trip_on_s3(s3: str, tmp_path: Path) -> None:  # noqa: F811
    store = open_storage("s3://roundtrip/exports", _options(s3))
    store.fs.mkdir("roundtrip")
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "a.bin").write_bytes(bytes(range(256)) * 4096)
    (src / "sub" / "b.txt").write_text("hello")
    sent = store.put_dir(src, "run-7")
    assert store.listing("run-7") == ["a.bin", "sub/b.txt"]
    assert sent.bytes == 256 * 4096 + 5 and sent.gbps is not None
    assert not any("partial" in p for p in store.fs.find("roundtrip"))  # no temp names left
    got = store.get_dir("run-7", tmp_path / "back")
    assert {f.path: f.sha256 for f in got.files} == {f.path: f.sha256 for f in sent.files}
    assert (tmp_path / "back" / "a.bin").read_bytes() == (src / "a.bin").read_bytes()
    store.remove("run-7")
    assert store.listing("run-7") == [] and not store.exists("run-7")


def test_export_test_with_s3_storage(s3: str, tmp_path: Path, executor: LocalExecutor) -> None:  # noqa: F811
    store = open_storage("s3://ml-exports/export-test", _options(s3))
    store.fs.mkdir("ml-exports")
    plan_path = tmp_path / "export-test.yaml"
    plan_path.write_text("option: rented-pool\n")
    setup = ExportTestSetup(
        plan=ExportTestPlan(
            option="rented-pool",
            model=MODEL,
            identity=IDENTITY,
            throughput_floor_mb=16,
            run_size_gb=40.0,
        ),
        plan_path=plan_path,
        work=tmp_path / "work",
        storage=store,
        executor=executor,
        run_id="rented-1",
    )
    store.check()
    f = run_export_test(setup).figures
    assert f["verdict"] == "pass", f["reasons"]
    assert f["export_url"] == "s3://ml-exports/export-test/rented-1"
    listed = store.listing("rented-1")
    assert "checkpoint-4/model.safetensors" in listed and "run-manifest.json" in listed
    restore = next(s for s in f["steps"] if s["name"] == "resume")["figures"]["restore"]
    assert restore["source"] == "s3://ml-exports/export-test/rented-1"
    assert restore["bytes"] == f["bytes_exported"]
    assert f["final_metrics"] == f["reference_metrics"]
    # The object store measured on a 16 MB sample (2 pieces), written, read back, removed.
    sample = f["throughput"]["sample"]
    assert sample["measured"] and sample["source"] == "probe"
    assert sample["storage"] == "s3://ml-exports/export-test"
    assert sample["sample_bytes"] == 16_000_000 and sample["gbps"] > 0
    assert f["migration_window_hours"] == pytest.approx(40 / sample["gbps"] / 3600, rel=1e-2)
    assert not [p for p in store.fs.find("ml-exports") if "throughput-sample" in p]
    assert f["contour"]["storage"] == "s3://ml-exports/export-test"
    assert f["contour"]["artifacts"] == "produced_here"


def test_export_denied_is_one_clear_error(s3: str, tmp_path: Path) -> None:  # noqa: F811
    """A credential whose policy was withdrawn: 403 from the server, one line, no traceback."""
    import json

    import boto3  # installed with moto[server]; used only to set up IAM

    from gpudecide.errors import InputError

    from .test_artifacts_s3 import _reset_auth

    iam = boto3.client(
        "iam", endpoint_url=s3, aws_access_key_id="testing",
        aws_secret_access_key="testing", region_name="us-east-1",
    )  # fmt: skip
    iam.create_user(UserName="exporter")
    allow = {"Effect": "Allow", "Action": "s3:*", "Resource": "*"}
    policy = {"Version": "2012-10-17", "Statement": [allow]}
    iam.put_user_policy(UserName="exporter", PolicyName="s3", PolicyDocument=json.dumps(policy))
    key = iam.create_access_key(UserName="exporter")["AccessKey"]
    options = {**_options(s3), "key": key["AccessKeyId"], "secret": key["SecretAccessKey"]}
    store = open_storage("s3://locked-exports/run", options)
    store.fs.mkdir("locked-exports")
    iam.delete_user_policy(UserName="exporter", PolicyName="s3")
    src = tmp_path / "src"
    src.mkdir()
    (src / "model.safetensors").write_bytes(b"\0" * 64)
    _reset_auth(s3, b"0")
    try:
        with pytest.raises(InputError) as exc:
            store.put_dir(src, "run-1")
    finally:
        _reset_auth(s3, b"1000000")
    line = exc.value.one_line()
    assert "access denied" in line and "s3://locked-exports/run/run-1" in line
    assert exc.value.field == "--storage" and "\n" not in line
