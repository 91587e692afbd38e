"""Credentials in job logs and configs, found and never shown (SPEC I3).

Logs of commands, parameters, paths and errors are where secrets leak (I3). The team points
the check at logs and configs; detect-secrets (Yelp's maintained detector set: cloud keys,
tokens, private keys, passwords in URLs, high-entropy strings) finds candidates, and the
shapes it misses are found here on every kind of file, whatever its name: shell exports and
assignments (`export HF_TOKEN=...`, `set`, `setenv`), INI, TOML and .env lines
(`aws_secret_access_key = ...`), YAML keys, JSON values, command-line flags
(`--token ...`), HTTP authorization headers, URLs with a password or a credential in the
query, .netrc lines, and the token formats of Hugging Face, GitHub fine-grained tokens,
OpenAI and Anthropic keys and Google API keys.

A finding keeps the file, the line and the detector's name; the value itself never leaves
this module: it is not printed, not written to evidence and not hashed into it (a short hash
of a weak password would let anyone confirm a guess).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from gpudecide.errors import InputError, from_os_error
from gpudecide.fsutil import relative_or_given
from gpudecide.governance.findings import Figure, Finding, RecordMessages, finding

__all__ = [
    "MASK",
    "SHAPES",
    "SKIP_DIRS",
    "SecretFinding",
    "SecretsFigures",
    "SecretsResult",
    "files_under",
    "find_in_line",
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


# Token formats detect-secrets 1.5 has no plugin for (Hugging Face, Anthropic, Google) or
# knows only in an older shape (GitHub fine-grained tokens, OpenAI project and service keys).
SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("Hugging Face Token", re.compile(r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,}")),
    ("GitHub Token", re.compile(r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{36,}")),
    (
        "OpenAI Token",
        re.compile(r"(?<![A-Za-z0-9_-])sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}"),
    ),
    ("OpenAI Token", re.compile(r"(?<![A-Za-z0-9_-])sk-[A-Za-z0-9]{48}(?![A-Za-z0-9])")),
    ("Anthropic API Key", re.compile(r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,}")),
    ("Google API Key", re.compile(r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}")),
)
# A key that names a credential: it ends in one of these words (HF_TOKEN, db_password,
# aws_secret_access_key, client-secret, X-Api-Key, auth), whatever its case.
_KEY = (
    r"[A-Za-z0-9_.-]*?(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|"
    r"access[_-]?key|secret[_-]?key|private[_-]?key|credentials?|auth|signature)"
)
_VALUE = r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s,;&\"'#}\]<>]+)"
# KEY=VALUE, KEY: VALUE, KEY = VALUE, "KEY": "VALUE", KEY => VALUE, after a shell word
# (export, set, local, declare -x) or at the start of a line, a field, a query parameter.
_ASSIGN = re.compile(
    r"(?:^|(?<=[\s;,&?{(\[|]))(?:export\s+|set\s+|local\s+|declare\s+-\w+\s+|readonly\s+)?"
    rf"[\"']?(?P<key>{_KEY})[\"']?\s*(?::=|=>|=|:)\s*{_VALUE}",
    re.IGNORECASE,
)
# --token VALUE, --password=VALUE, setenv KEY VALUE.
_FLAG = re.compile(
    rf"(?:^|(?<=\s))(?:--?|setenv\s+)(?P<key>{_KEY})(?:=|\s+){_VALUE}", re.IGNORECASE
)
# Authorization: Bearer VALUE (HTTP headers, curl -H).
_HEADER = re.compile(
    r"authorization[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token|apikey)\s+(?P<value>[^\s\"',;]+)",
    re.IGNORECASE,
)
# machine host login user password VALUE (.netrc), only on a line that names a machine or
# a login, or that is `password VALUE` alone (a .netrc written one token a line): elsewhere
# "password" before a word is prose.
_NETRC = re.compile(r"(?:^|\s)password\s+(?P<value>\S+)", re.IGNORECASE)
_NETRC_LINE = re.compile(
    r"(?:^|\s)(?:machine|login|default)\s|^\s*password\s+\S+\s*$", re.IGNORECASE
)
# scheme://user:VALUE@host, the user possibly empty (redis://:VALUE@host).
_URL = re.compile(
    r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,31}://[^\s/:@]*:(?P<value>[^\s/@]+)@"
)
_PLACEHOLDER_WORDS = frozenset(
    {"null", "none", "nil", "true", "false", "yes", "no", "redacted", "masked", "hidden"}
)
# A line longer than this is scanned in pieces (a minified bundle, a binary blob).
_LINE_CHUNK = 1 << 16


def _placeholder(raw: str) -> bool:
    """A value that stands for a credential without being one: empty, null and its kin,
    $VAR, ${VAR}, <your-token>, ******, {{ secret }}, xxxxxxxx."""
    value = raw.strip().strip("\"'").strip()
    low = value.casefold()
    if not value or low in _PLACEHOLDER_WORDS or value == MASK:
        return True
    if value[0] in "$%<*{" or "${" in value or "{{" in value or "..." in value:
        return True
    return len(value) >= 4 and len(set(low)) <= 2


def _placeholders_only(line: str) -> bool:
    """Whether every secret-named assignment of a line holds a placeholder (there is one)."""
    values = [m.group("value") for m in _ASSIGN.finditer(line)]
    return bool(values) and all(_placeholder(v) for v in values)


def _credential_value(raw: str) -> bool:
    """Whether the value of a credential-named key looks like a credential: not empty, not
    a placeholder, a reference or a path, 8 characters or more, letters with digits (or a
    long mixed-case run)."""
    value = raw.strip().strip("\"'").strip()
    if len(value) < 8 or _placeholder(value) or value[0] in "[(":
        return False
    if value.startswith(("/", "./", "../", "~/")) or "://" in value:
        return False  # a path to a secret file, a URL (its password is found apart)
    if "(" in value and value.endswith(")"):
        return False  # a call in a script (token = session.get_token()), not a value
    letters = any(c.isalpha() for c in value)
    digits = any(c.isdigit() for c in value)
    mixed = any(c.isupper() for c in value) and any(c.islower() for c in value)
    return (letters and digits) or (len(value) >= 16 and mixed)


def _url_password(value: str) -> bool:
    """A URL's password is any value but a placeholder ($PW, ${PW}, <password>, ****)."""
    return len(value) >= 4 and value[0] not in "$%<*{" and len(set(value)) > 1


def _spans(line: str) -> Iterator[tuple[str, int, int]]:
    """(detector type, start, end) of every credential value in one line."""
    for kind, pattern in SHAPES:
        for m in pattern.finditer(line):
            yield kind, m.start(), m.end()
    for m in _URL.finditer(line):
        if _url_password(m.group("value")):
            yield "Basic Auth Credentials", m.start("value"), m.end("value")
    for m in _HEADER.finditer(line):
        if len(m.group("value")) >= 8:
            yield "Secret Keyword", m.start("value"), m.end("value")
    patterns = [_ASSIGN, _FLAG] + ([_NETRC] if _NETRC_LINE.search(line) else [])
    for pattern in patterns:
        for m in pattern.finditer(line):
            if _credential_value(m.group("value")):
                yield "Secret Keyword", m.start("value"), m.end("value")


def find_in_line(line: str) -> list[str]:
    """The detector types this module finds in one line of text, each once."""
    found: list[str] = []
    for start in range(0, max(len(line), 1), _LINE_CHUNK):
        for kind, _, _ in _spans(line[start : start + _LINE_CHUNK + 256]):
            if kind not in found:
                found.append(kind)
    return found


def files_under(paths: list[Path]) -> list[Path]:
    """The files named, and every file below the folders named (tool state folders skipped;
    FIFOs, devices and sockets inside a folder are not files to read)."""
    found: list[Path] = []
    for p in paths:
        if p.is_file():
            found.append(p)
        elif p.is_dir():
            for child in sorted(p.rglob("*")):
                rel = child.relative_to(p).parts
                if child.is_file() and not SKIP_DIRS & set(rel[:-1]):
                    found.append(child)
        elif p.exists():
            raise InputError(
                "not a regular file or folder",
                path=p,
                hint="name log and config files or the folders that hold them",
            )
        else:
            raise InputError("no such file or directory", path=p)
    return found


def _own_hits(path: Path) -> Iterator[tuple[int, str]]:
    """(line, type) of what this module finds in a file, line by line, whatever its kind."""
    try:
        with path.open("rb") as handle:
            for number, raw in enumerate(handle, 1):
                for kind in find_in_line(raw.decode("utf-8", "replace")):
                    yield number, kind
    except OSError as exc:
        raise from_os_error(exc, path) from None


def _drop_placeholders(path: Path, lines: dict[int, set[str]]) -> None:
    """detect-secrets' keyword finding on a line whose secret-named values are all
    placeholders (`secret: null`, `password: $DB_PASSWORD`) is no credential: dropped."""
    keyword = {n for n, types in lines.items() if "Secret Keyword" in types}
    if not keyword:
        return
    try:
        with path.open("rb") as handle:
            for number, raw in enumerate(handle, 1):
                if number in keyword and _placeholders_only(raw.decode("utf-8", "replace")):
                    lines[number].discard("Secret Keyword")
                    if not lines[number]:
                        del lines[number]
    except OSError as exc:
        raise from_os_error(exc, path) from None


def scan(paths: list[Path], *, root: Path | None = None, option: str = "") -> SecretsResult:
    """Scan files (folders recursively) for credentials; values are masked, never kept."""
    # detect-secrets (and its plugins) load with the first scan: the other checks and the
    # report read this module's figures without it.
    from detect_secrets.core.secrets_collection import SecretsCollection
    from detect_secrets.settings import default_settings

    files = files_under(paths)
    hits: set[tuple[str, int, str]] = set()
    with default_settings():
        for path in files:
            shown = relative_or_given(path, root)
            collection = SecretsCollection()
            try:
                collection.scan_file(str(path))
            except OSError as exc:
                raise from_os_error(exc, path) from None
            lines: dict[int, set[str]] = {}
            for _, secret in collection:
                lines.setdefault(int(secret.line_number), set()).add(str(secret.type))
            _drop_placeholders(path, lines)
            for number, kind in _own_hits(path):
                # The generic keyword finding only where no detector saw the line already.
                if kind == "Secret Keyword" and lines.get(number):
                    continue
                lines.setdefault(number, set()).add(kind)
            hits |= {(shown, n, t) for n, types in lines.items() for t in types}
    findings = [
        finding("secret_found", option, False, "I3", path=p, line=n, type=t)
        for p, n, t in sorted(hits)
    ]
    figures = SecretsFigures(
        files_scanned=len(files),
        secrets=len(findings),
        by_type=dict(sorted(Counter(t for _, _, t in hits).items())),
        findings=[SecretFinding(**f.model_dump()) for f in findings],
        option=option or None,
    )
    return SecretsResult(findings, figures, files)
