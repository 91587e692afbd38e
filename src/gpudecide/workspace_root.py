"""Where a workspace is and the language it is read in, known without its models.

The command line answers `--help`, and says its usage errors, in the workspace's language
before any command opens the workspace; building the workspace and evidence models for that
would cost more than the rest of the answer (issue 25, start-up).
"""

from __future__ import annotations

import os
from pathlib import Path

from gpudecide.errors import InputError
from gpudecide.i18n import LANGUAGES, Language

__all__ = ["CONFIG_NAME", "configured_language", "find_root"]

CONFIG_NAME = "gpudecide.yaml"


def find_root(start: Path) -> Path | None:
    """The nearest directory at or above `start` holding gpudecide.yaml."""
    here = start.resolve()
    for candidate in (here, *here.parents):
        # lexists, not is_file: a config that is a FIFO or a link to a device is found here
        # and then refused by name when it is loaded, not skipped for a parent's config.
        if os.path.lexists(candidate / CONFIG_NAME):
            return candidate
    return None


def configured_language(root: Path) -> Language | None:
    """`report.language` of the workspace at `root`, read with the bounds of every YAML
    input but not validated; None where the file cannot be read or names no language
    (the command that opens the workspace says what is wrong with it)."""
    from gpudecide.inputs import load_yaml

    try:
        data, _ = load_yaml(root / CONFIG_NAME)
    except (InputError, OSError):
        return None
    report = data.get("report") if isinstance(data, dict) else None
    value = report.get("language") if isinstance(report, dict) else None
    for lang in LANGUAGES:
        if value == lang:
            return lang
    return None
