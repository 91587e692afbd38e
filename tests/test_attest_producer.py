"""Every record names its producer (issue 26, SPEC A5, R3): the author from --author, else
the workspace's `author`, else git's user.name and user.email, else the OS user; the host;
the tool version. The producer is covered by the content hash (editing it is tampering) and
left out of the identity (the same analysis of the same inputs by someone else is the same
result); records written before the producer existed still load and stay fresh."""

from __future__ import annotations

import getpass
import hashlib
import json
import socket
import subprocess
from pathlib import Path

import pytest

from gpudecide import __version__, workspace
from gpudecide import evidence as ev
from gpudecide.author import set_author
from gpudecide.errors import InputError
from gpudecide.inputs import load_yaml_model

from .attest_fixtures import _fresh_run  # noqa: F401 (autouse)


@pytest.fixture
def git_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user-level git config of our own (the machine's is never read)."""
    config = tmp_path / "gitconfig"
    config.write_text("[user]\n\tname = Ann Auditor\n\temail = ann@example.org\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return config


def _record(root: Path, value: int = 1) -> ev.Evidence:
    log = root / "log.txt"
    if not log.exists():
        log.write_text("JobID|State\n")
    return ev.Evidence(
        kind="probe",
        title="t",
        spec_ids=["A5"],
        verdict="info",
        summary="s",
        figures={"value": value},
        inputs=[ev.input_ref(log, root)],
    )


def test_a_record_names_author_host_and_version(tmp_path: Path, git_home: Path) -> None:
    path = ev.write(_record(tmp_path), tmp_path / "evidence")
    doc = json.loads(path.read_text())
    assert doc["producer"] == {
        "author": "Ann Auditor <ann@example.org>",
        "author_from": "git",
        "host": socket.gethostname(),
    }
    assert doc["tool_version"] == __version__
    assert ev.freshness(ev.load(path, verify=True), tmp_path) == (ev.Freshness.FRESH, [])


def test_author_order_option_workspace_git_os(
    tmp_path: Path, git_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert ev.producer(tmp_path).author_from == "git"
    set_author("Workspace Owner", source="workspace")
    assert (ev.producer(tmp_path).author, ev.producer(tmp_path).author_from) == (
        "Workspace Owner",
        "workspace",
    )
    # A workspace passed in explicitly (as `sign` does) is the same rung.
    assert ev.producer(tmp_path, "Other Owner").author == "Other Owner"
    set_author("  Bea Builder <bea@example.org> ")
    chosen = ev.producer(tmp_path)
    assert (chosen.author, chosen.author_from) == ("Bea Builder <bea@example.org>", "option")
    set_author(None)
    set_author("", source="workspace")  # empty: not declared
    assert ev.producer(tmp_path).author_from == "git"
    # The repository's own user.name wins over the user's (git's order), from `where`.
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "config", "user.name", "Local Name"], check=True)
    who = ev.producer(repo / "evidence" / "not-yet")
    assert who.author == "Local Name <ann@example.org>" and who.author_from == "git"
    # No git identity at all (or no git): the login name.
    git_home.write_text("")
    assert (ev.producer(tmp_path).author, ev.producer(tmp_path).author_from) == (
        getpass.getuser(),
        "os",
    )
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    assert ev.producer(tmp_path).author_from == "os"


def test_a_bad_author_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        set_author("Eve\x1b[31m Mallory")
    assert info.value.field == "--author"
    assert info.value.message == "an author is one line of at most 200 printable characters"
    with pytest.raises(InputError):
        set_author("x" * 201)
    cfg = tmp_path / workspace.CONFIG_NAME
    cfg.write_text('author: "' + "y" * 300 + '"\n')
    with pytest.raises(InputError) as info:
        load_yaml_model(cfg, workspace.WorkspaceConfig)
    assert info.value.field == "author" and info.value.line == 1
    assert "an author is one line of at most 200 printable characters" in info.value.message


def test_the_workspace_author_is_read_from_gpudecide_yaml(tmp_path: Path) -> None:
    workspace.init(tmp_path / "ws")
    cfg = tmp_path / "ws" / workspace.CONFIG_NAME
    assert 'author: ""' in cfg.read_text()
    cfg.write_text(cfg.read_text().replace('author: ""', 'author: "Risk Team <risk@example.org>"'))
    ws = workspace.load(tmp_path / "ws")
    assert ws.config.author == "Risk Team <risk@example.org>"
    assert ev.producer(ws.root, ws.config.author).author_from == "workspace"


def test_producer_is_in_the_content_hash_not_the_identity(tmp_path: Path, git_home: Path) -> None:
    one = ev.seal(_record(tmp_path))
    set_author("Someone Else")
    two = ev.seal(_record(tmp_path), now=None)
    assert one.producer != two.producer
    assert one.id == two.id and one.identity_sha256() == two.identity_sha256()
    assert one.content_sha256 != two.content_sha256
    # Editing the producer of a written record is tampering, like editing a figure.
    path = ev.write(one, tmp_path / "evidence")
    doc = json.loads(path.read_text())
    doc["producer"]["author"] = "Mallory"
    path.write_text(json.dumps(doc))
    assert ev.freshness(ev.load(path), tmp_path)[0] is ev.Freshness.TAMPERED
    # So is removing it: the seal was made with it.
    del doc["producer"]
    path.write_text(json.dumps(doc))
    assert ev.freshness(ev.load(path), tmp_path)[0] is ev.Freshness.TAMPERED
    # A record sealed with its producer keeps it when written.
    kept = ev.write(two, tmp_path / "evidence2")
    assert ev.load(kept).producer == two.producer


def test_a_record_from_before_the_producer_loads_and_stays_fresh(tmp_path: Path) -> None:
    """The record as older gpudecide wrote it: no `producer` key, sealed without it."""
    log = tmp_path / "log.txt"
    log.write_text("JobID|State\n")
    body = {
        "id": "",
        "kind": "probe",
        "title": "t",
        "spec_ids": ["A5"],
        "verdict": "info",
        "summary": "s",
        "figures": {"value": 1},
        "notes": [],
        "inputs": [
            {
                "path": "log.txt",
                "sha256": hashlib.sha256(log.read_bytes()).hexdigest(),
                "size": log.stat().st_size,
                "record_id": None,
            }
        ],
        "tool_version": "0.1.0",
        "created_at_utc": "2026-06-01T00:00:00.000000Z",
    }
    core = {"kind": "probe", "figures": body["figures"], "inputs": body["inputs"]}
    canon = lambda o: json.dumps(o, sort_keys=True, separators=(",", ":")).encode()  # noqa: E731
    body["id"] = "probe-" + hashlib.sha256(canon(core)).hexdigest()[:16]
    body["content_sha256"] = hashlib.sha256(canon(body)).hexdigest()
    path = tmp_path / "evidence" / f"{body['id']}.json"
    path.parent.mkdir()
    path.write_text(json.dumps(body, indent=2))
    record = ev.load(path, verify=True)
    assert record.producer is None and record.id == body["id"]
    assert ev.freshness(record, tmp_path) == (ev.Freshness.FRESH, [])
    # It is still cited by id and identity like any record.
    assert ev.record_ref(path, tmp_path).sha256 == record.identity_sha256()
