"""A zip member zipfile cannot decode (a "version needed to extract" it does not know) is
named as not scanned, never a crash (found by the archive fuzzer)."""

from __future__ import annotations

import io
import json
import pickle
import struct
import zipfile
from pathlib import Path

from typer.testing import CliRunner

from gpudecide.cli import app


def _zip_needing_version(version: int) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pickle.dumps({"step": 3}, protocol=2))
    data = bytearray(buf.getvalue())
    local = data.find(b"PK\x03\x04")
    central = data.find(b"PK\x01\x02")
    struct.pack_into("<H", data, local + 4, version)  # local header: version needed
    struct.pack_into("<H", data, central + 6, version)  # central directory: version needed
    return bytes(data)


def test_unknown_zip_version_is_not_scanned_and_named(tmp_path: Path) -> None:
    export = tmp_path / "export"
    export.mkdir()
    (export / "model.pt").write_bytes(_zip_needing_version(64))  # "zip file version 6.4"
    res = CliRunner().invoke(app, ["audit", str(export), "--json", "--evidence-dir", str(tmp_path)])
    assert res.exit_code == 1, res.output
    hazards = {(h["id"], h["path"]) for h in json.loads(res.stdout)["hazards"]}
    assert ("archive_not_scanned", "model.pt") in hazards
