"""Egress from real S3 API calls: a moto_server process on loopback, read through s3fs
(SPEC E5 throttled egress, V1 migration window, and a 403 that must be a clear error)."""

from __future__ import annotations

import hashlib
import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from gpudecide.artifacts import audit
from gpudecide.artifacts.cli import register
from gpudecide.artifacts.figures import figures_of
from gpudecide.errors import InputError

from .test_artifacts_models import build


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def s3() -> Iterator[str]:
    """A real S3 HTTP API server (moto_server) on a free loopback port."""
    port = _free_port()
    exe = Path(sys.executable).parent / "moto_server"
    proc = subprocess.Popen(
        [str(exe), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"{url}/moto-api/", timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("moto_server did not start") from None
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def arts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The artifacts built by the real libraries."""
    return build(tmp_path_factory.mktemp("artifacts"))


def _fs(url: str, key: str = "testing", secret: str = "testing") -> object:
    import s3fs

    return s3fs.S3FileSystem(key=key, secret=secret, endpoint_url=url, skip_instance_cache=True)


def _options(url: str, key: str = "testing", secret: str = "testing") -> dict[str, object]:
    return {"endpoint_url": url, "key": key, "secret": secret, "skip_instance_cache": True}


def test_egress_measured_and_extrapolated(s3: str, arts: dict[str, Path], tmp_path: Path) -> None:
    fs = _fs(s3)
    fs.mkdir("vendor-export")  # type: ignore[attr-defined]
    fs.put(str(arts["trainer"]) + "/", "vendor-export/run-7/", recursive=True)  # type: ignore[attr-defined]
    plan = tmp_path / "plan.yaml"
    plan.write_text("run_size_gb: 850\nmax_migration_hours: 48\n")
    dest = tmp_path / "copy"
    result = audit.run(
        dest,
        plan_path=plan,
        source="s3://vendor-export/run-7",
        storage_options=_options(s3),
    )
    eg = result.figures["egress"]
    local = {
        p.relative_to(arts["trainer"]).as_posix(): p.read_bytes()
        for p in arts["trainer"].rglob("*")
        if p.is_file()
    }
    assert eg["files"] == len(local) and eg["bytes"] == sum(len(b) for b in local.values())
    for rel, body in local.items():
        assert (dest / rel).read_bytes() == body
    ref = {i.path.rsplit("copy/", 1)[-1]: i.sha256 for i in result.record.inputs}
    assert (
        ref["checkpoint-3/optimizer.pt"]
        == hashlib.sha256(local["checkpoint-3/optimizer.pt"]).hexdigest()
    )
    rate = eg["bytes"] / eg["seconds"]
    assert eg["run_bytes"] == 850_000_000_000
    assert eg["migration_window_hours"] == pytest.approx(850e9 / rate / 3600, rel=1e-3)
    throttled = [h for h in result.figures["hazards"] if h["id"] == "egress_throttled"]
    assert bool(throttled) == (eg["migration_window_hours"] > 48)
    assert result.figures["resumable"] is True
    # The typed figures hold the egress as written (record hashes unchanged).
    figures = json.loads(json.dumps(result.record.figures))
    assert figures_of(result.record).model_dump(mode="json") == figures
    assert result.model.egress is not None and result.model.egress.run_bytes == 850_000_000_000


def test_egress_over_the_window_is_a_hazard_via_cli(
    s3: str, arts: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    fs = _fs(s3)
    fs.mkdir("slow-export")  # type: ignore[attr-defined]
    fs.put(str(arts["adapter_pinned"]) + "/", "slow-export/a/", recursive=True)  # type: ignore[attr-defined]
    (tmp_path / "plan.yaml").write_text(
        "run_size_gb: 100000\nmax_migration_hours: 0.5\nresumable_required: false\n"
    )
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        """Test shell."""

    register(app)
    args = ["audit", "copy", "--source", "s3://slow-export/a", "--expect", "plan.yaml", "--json"]
    for key, value in _options(s3).items():
        args += ["--storage-option", f"{key}={value}"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 1, res.output
    body = json.loads(res.stdout)
    assert [h["id"] for h in body["hazards"]] == ["egress_throttled"]
    assert body["egress"]["migration_window_hours"] > 0.5


def _reset_auth(url: str, count: bytes) -> None:
    """moto's switch: authenticate every request after `count` more (a text/plain body)."""
    req = urllib.request.Request(
        f"{url}/moto-api/reset-auth",
        data=count,
        method="POST",
        headers={"Content-Type": "text/plain"},
    )
    urllib.request.urlopen(req).close()


def test_access_denied_is_a_clear_error_and_leaves_nothing(s3: str, tmp_path: Path) -> None:
    import boto3  # installed with moto[server]; used only to set up IAM

    iam = boto3.client(
        "iam",
        endpoint_url=s3,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    )
    iam.create_user(UserName="auditor")
    policy = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}],
    }
    iam.put_user_policy(UserName="auditor", PolicyName="s3", PolicyDocument=json.dumps(policy))
    key = iam.create_access_key(UserName="auditor")["AccessKey"]
    kid, secret = key["AccessKeyId"], key["SecretAccessKey"]
    fs = _fs(s3, kid, secret)
    fs.mkdir("locked")  # type: ignore[attr-defined]
    fs.pipe("locked/run/model.safetensors", b"\x00" * 16)  # type: ignore[attr-defined]
    iam.delete_user_policy(UserName="auditor", PolicyName="s3")
    _reset_auth(s3, b"0")  # authentication on from the next request
    dest = tmp_path / "copy"
    try:
        with pytest.raises(InputError) as exc:
            audit.run(dest, source="s3://locked/run", storage_options=_options(s3, kid, secret))
    finally:
        # back to no authentication for whatever runs next on this server
        _reset_auth(s3, b"1000000")
    line = exc.value.one_line()
    assert "access denied" in line and "s3://locked/run" in line and "\n" not in line
    assert exc.value.field == "--source"
    assert not dest.exists() and list(tmp_path.iterdir()) == []
