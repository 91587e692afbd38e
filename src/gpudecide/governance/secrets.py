"""Credentials in job logs and configs, found with detect-secrets and never shown (SPEC I3).

Logs of commands, parameters, paths and errors are where secrets leak (I3). The team points
the check at logs and configs; detect-secrets (Yelp's maintained detector set: cloud keys,
tokens, private keys, passwords in URLs, high-entropy strings) finds candidates. A finding
keeps the file, the line and the detector's name; the value itself never leaves this module:
it is not printed, not written to evidence and not hashed into it (a short hash of a weak
password would let anyone confirm a guess).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from detect_secrets.core.secrets_collection import SecretsCollection
from detect_secrets.settings import default_settings

from gpudecide.errors import InputError
from gpudecide.fsutil import relative_or_given
from gpudecide.governance.findings import Figure, Finding, RecordMessages, finding

__all__ = [
    "MASK",
    "SKIP_DIRS",
    "SecretFinding",
    "SecretsFigures",
    "SecretsResult",
    "files_under",
    "scan",
]

MASK = "********"
# Folders that hold tools' own state, not the team's logs and configs.
SKIP_DIRS = frozenset({".git", ".venv", "__pycache__", "node_modules", "evidence", "report"})


class SecretFinding(Finding):
    """A credential found, as the record keeps it: where and which detector, the value masked."""

    masked: str = MASK


class SecretsFigures(Figure):
    """The figures of a `secrets` record (SPEC I3); `option` only when the logs are an
    option's."""

    OMIT_NONE: ClassVar[frozenset[str]] = frozenset({"option", "messages"})

    files_scanned: int
    secrets: int
    by_type: dict[str, int]
    findings: list[SecretFinding]
    option: str | None = None
    messages: RecordMessages | None = None


@dataclass
class SecretsResult:
    """What a scan found and which files it read."""

    findings: list[Finding]
    figures: SecretsFigures
    files: list[Path]


def files_under(paths: list[Path]) -> list[Path]:
    """The files named, and every file below the folders named (tool state folders skipped)."""
    found: list[Path] = []
    for p in paths:
        if p.is_file():
            found.append(p)
        elif p.is_dir():
            for child in sorted(p.rglob("*")):
                rel = child.relative_to(p).parts
                if child.is_file() and not SKIP_DIRS & set(rel[:-1]):
                    found.append(child)
        else:
            raise InputError("no such file or directory", path=p)
    return found


def scan(paths: list[Path], *, root: Path | None = None, option: str = "") -> SecretsResult:
    """Scan files (folders recursively) for credentials; values are masked, never kept."""
    files = files_under(paths)
    hits: list[tuple[str, int, str]] = []
    with default_settings():
        for path in files:
            collection = SecretsCollection()
            collection.scan_file(str(path))
            shown = relative_or_given(path, root)
            for _, secret in collection:
                hits.append((shown, int(secret.line_number), str(secret.type)))
    findings = [
        finding("secret_found", option, False, "I3", path=p, line=n, type=t)
        for p, n, t in sorted(set(hits))
    ]
    figures = SecretsFigures(
        files_scanned=len(files),
        secrets=len(findings),
        by_type=dict(sorted(Counter(t for _, _, t in set(hits)).items())),
        findings=[SecretFinding(**f.model_dump()) for f in findings],
        option=option or None,
    )
    return SecretsResult(findings, figures, files)
