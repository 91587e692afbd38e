"""Workspace: the template documents every field; bad configs name file, line and field."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from gpudecide import workspace
from gpudecide.errors import InputError


def _fields(model: type[BaseModel], prefix: str = "") -> list[str]:
    out: list[str] = []
    for name, info in model.model_fields.items():
        out.append(prefix + name)
        ann: Any = info.annotation
        for candidate in (ann, *getattr(ann, "__args__", ())):
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                out += _fields(candidate, prefix + name + ".")
    return out


def test_template_documents_every_field(tmp_path: Path) -> None:
    text = workspace.template_files()[workspace.CONFIG_NAME]
    lines = text.splitlines()
    for dotted in _fields(workspace.WorkspaceConfig):
        if dotted.startswith(
            ("classify.rules.", "classify.extra_rules.", "matrix.scores.", "matrix.residency.")
        ):
            continue  # list items: documented in the comment on the list
        key = dotted.split(".")[-1]
        idx = next((i for i, ln in enumerate(lines) if re.match(rf"\s*(- )?{key}:", ln)), None)
        assert idx is not None, f"{dotted} missing from the template"
        assert lines[idx - 1].lstrip().startswith("#"), f"{dotted} has no comment above it"


def test_init_writes_a_valid_workspace(tmp_path: Path) -> None:
    written = workspace.init(tmp_path / "ws")
    assert (tmp_path / "ws" / "gpudecide.yaml") in written
    for sub in ("logs", "evidence", "report"):
        assert (tmp_path / "ws" / sub).is_dir()
    ws = workspace.load(tmp_path / "ws")
    assert ws.config.profile.weeks == 8 and ws.config.classify.restart_window_hours == 72
    with pytest.raises(InputError, match="would overwrite"):
        workspace.init(tmp_path / "ws")
    workspace.init(tmp_path / "ws", force=True)


@pytest.mark.parametrize(
    ("edit", "field", "words"),
    [
        (("weeks: 8", "weeks: zero"), "profile.weeks", "integer"),
        (("timezone: UTC", "timezone: Mars/Olympus"), "timezone", "unknown time zone"),
        (("language: en", "language: de"), "report.language", "'en', 'ru' or 'kk'"),
        (
            ("restart_window_hours: 72", "restart_window_hours: 72\n  retsart: 1"),
            "classify.retsart",
            "unknown key",
        ),
        (
            ("extra_rules: []", "extra_rules: [{kind: eval, pattern: '(?=x)'}]"),
            "classify.extra_rules[0].pattern",
            "not a valid regular expression",
        ),
    ],
)
def test_bad_config_names_line_and_field(
    tmp_path: Path, edit: tuple[str, str], field: str, words: str
) -> None:
    workspace.init(tmp_path)
    cfg = tmp_path / "gpudecide.yaml"
    text = cfg.read_text()
    assert edit[0] in text
    cfg.write_text(text.replace(edit[0], edit[1]))
    with pytest.raises(InputError) as exc:
        workspace.load(tmp_path)
    err = exc.value
    assert err.field == field and words in err.message and err.path == str(cfg)
    target = edit[1].splitlines()[-1].strip().split(":")[0]
    if "pattern" not in field:
        assert err.line is not None
        assert target in cfg.read_text().splitlines()[err.line - 1]


def test_yaml_syntax_error_has_a_line(tmp_path: Path) -> None:
    workspace.init(tmp_path)
    cfg = tmp_path / "gpudecide.yaml"
    n = len(cfg.read_text().splitlines())
    cfg.write_text(cfg.read_text() + "\nprofile: [unclosed\n")
    with pytest.raises(InputError) as exc:
        workspace.load(tmp_path)
    # The unclosed list opens on line n + 2; the parser notices at the end of the file.
    assert exc.value.line in (n + 2, n + 3) and "YAML" in exc.value.message
    assert exc.value.path == str(cfg)


def test_yaml_tags_never_build_objects(tmp_path: Path) -> None:
    """The loader is a safe one: a tag that would call a function is refused as bad input
    and the call never happens."""
    workspace.init(tmp_path)
    cfg = tmp_path / "gpudecide.yaml"
    marker = tmp_path / "ran"
    cfg.write_text(cfg.read_text() + f'\nx: !!python/object/apply:os.system ["touch {marker}"]\n')
    with pytest.raises(InputError) as exc:
        workspace.load(tmp_path)
    assert exc.value.path == str(cfg) and exc.value.line is not None
    assert not marker.exists()


def test_find_root(tmp_path: Path) -> None:
    workspace.init(tmp_path)
    deep = tmp_path / "logs" / "x"
    deep.mkdir()
    assert workspace.find_root(deep) == tmp_path.resolve()
