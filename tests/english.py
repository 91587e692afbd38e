"""Finding English prose in text meant for Russian and Kazakh readers (issue 10).

Shared by the report test (tests/i18n/test_catalogues.py) and the commands' tests: `english_runs`
names the English words of a text, leaving out identifiers and the team's own words;
`VisibleText` collects a report's visible text per section; `team_words` lists what the
report and the commands quote verbatim from a workspace.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import ClassVar

_WORD = re.compile(r"[A-Za-z][a-z]+(?:'[a-z]+)?")


class VisibleText(HTMLParser):
    """Visible text nodes per report section, without verbatim identifiers."""

    SKIP: ClassVar[set[str]] = {"code", "style", "script", "title", "metadata"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[bool] = []
        self.section = "head"
        self.texts: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "section":
            self.section = a.get("data-kind") or a.get("id") or "?"
        skip = tag in self.SKIP or a.get("translate") == "no" or a.get("lang") == "en"
        if tag not in ("meta", "br", "hr", "img", "input", "link", "path", "use"):
            self.stack.append(skip or (bool(self.stack) and self.stack[-1]))

    def handle_endtag(self, tag: str) -> None:
        if tag not in ("meta", "br", "hr", "img", "input", "link", "path", "use") and self.stack:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        if data.strip() and not (self.stack and self.stack[-1]):
            self.texts.append((self.section, data.strip()))


def team_words(ws_root: Path) -> list[str]:
    """What the report quotes verbatim: every string the team wrote in its input files
    (values and keys: SLO names are keys), and the names the data gives things (job kinds,
    the scheduler's wait reasons, chain stages) as the evidence records hold them."""
    import json

    import yaml

    out: list[str] = []

    def walk(v: object) -> None:
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict):
            for k, x in v.items():
                walk(str(k))
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    for path in ws_root.glob("*.yaml"):
        walk(yaml.safe_load(path.read_text(encoding="utf-8")))
    for path in (ws_root / "evidence").glob("*.json"):
        record = json.loads(path.read_text(encoding="utf-8"))
        f = record.get("figures") or {}
        out += list(f.get("jobs_by_kind") or {})
        out += [str(r.get("reason")) for r in f.get("wait_reasons") or []]
        for c in f.get("chains") or []:
            out += [str(c.get("last_stage")), str(c.get("longest_waiting_stage"))]
    return [s for s in out if len(s) >= 3]


def english_runs(text: str, quoted: list[str]) -> list[str]:
    """English words in `text` that are not inside a string the team wrote.

    A word is a token of Latin letters only, lowercase after its first letter; tokens with
    digits, dots, underscores, brackets or inner hyphens are identifiers (ids, field paths).
    """
    for q in sorted(quoted, key=len, reverse=True):
        if q in text:  # whole words only: "month" in "price_per_month" is not a quote
            # ...and never a part of a path or file name ("new/export-test.yaml" stays whole).
            text = re.sub(rf"(?<![\w./-]){re.escape(q)}(?![\w/-]|\.\w)", " ", text)
    # A command a line tells the reader to run ("gpudecide audit EXPORT_DIR") is typed as
    # it is in every language: its words are not prose.
    text = _COMMAND.sub(" ", text)
    tokens = re.split(r"[\s,;:()!?\"«»—–]+", text)
    words = [t.strip(".'") for t in tokens]
    # Acronyms (GPU, SLO, KZT, PUE) are shared; lowercase words are English prose.
    return [w for w in words if _WORD.fullmatch(w) and w not in _ALLOWED]


_COMMAND = re.compile(r"\bgpudecide(?:\s+[a-z][a-z-]*){1,3}\b")
# Words that read the same in the report's ru/kk text: product and vendor names and ids.
_ALLOWED = {"gpudecide", "sha", "fifo", "Slurm", "Hugging", "Face", "Kubernetes"}


def english_lines(
    output: str, ws_root: Path | None, quoted: list[str] | None = None
) -> list[tuple[str, list[str]]]:
    """The lines of a command's output that hold English prose: (line, its English words).

    Table borders and blank lines are skipped; the team's own words (of the workspace at
    `ws_root`), the `quoted` words and identifiers (ids, paths, field names) are not English
    prose."""
    quoted = (team_words(ws_root) if ws_root is not None else []) + (quoted or [])
    found = []
    for line in output.splitlines():
        text = line.strip(" │┃|─━┌┐└┘├┤┬┴┼╭╮╰╯")
        if text and (runs := english_runs(text, quoted)):
            found.append((line, runs))
    return found
