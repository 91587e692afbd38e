"""storage-revoked against a real S3 API (moto_server on 127.0.0.1, IAM authentication on)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpudecide.drills import storage_revoked
from gpudecide.drills.faults import MotoS3
from gpudecide.drills.runner import DrillContext
from gpudecide.errors import InputError


def test_s3_policy_revoked_gives_403_backoff_and_the_checkpoint_survives(tmp_path: Path) -> None:
    r = storage_revoked.run(DrillContext(root=tmp_path, storage="s3://drill-bucket/ft"))
    assert r.verdict == "pass", r.status
    assert r.details["storage_kind"] == "s3" and r.details["attempts"] == 4
    assert r.resumed_from_step in (4, 8)  # the last checkpoint stored before the revocation
    # Under the drill's own prefix of the storage: <storage>/<game day>/<drill>.
    prefix = f"s3://drill-bucket/ft/{tmp_path.name}/storage-revoked"
    denied = f"access denied at {prefix}/run/checkpoint-{r.resumed_from_step + 4}"
    assert denied in r.status and "403" in r.status
    journal = json.loads(r.journal.read_text())
    names = [x["activity"]["name"] for x in journal["rollbacks"]]
    assert "give access back" in names and "stop the storage server" in names
    assert journal["rollbacks"][-1]["output"] == "moto_server stopped"
    # The record states the local S3 server it really wrote to, never the bucket's s3:// name.
    assert r.storage_url is not None and r.storage_url.startswith("http://127.0.0.1:")
    assert r.storage_url.endswith(prefix[len("s3://") :])


def test_bad_bucket_name_is_bad_input_and_stops_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stopped: list[str] = []
    real_stop = MotoS3.stop

    def stop(self: MotoS3) -> str:
        stopped.append(self.url)
        return real_stop(self)

    monkeypatch.setattr(MotoS3, "stop", stop)
    with pytest.raises(InputError) as exc:
        storage_revoked.run(DrillContext(root=tmp_path, storage="s3://b1/x"))
    assert exc.value.field == "--storage" and "InvalidBucketName" in exc.value.message
    assert stopped and stopped[0].startswith("http://127.0.0.1:")
