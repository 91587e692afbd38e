"""Translations are complete and the ru/kk reports speak Russian and Kazakh (issue 10).

- Babel extracts every string a person reads from src/gpudecide (`_`, `N_`, `message`
  and the templates' `tr`), per catalogue domain; every ru and kk catalogue holds each one,
  translated and not fuzzy, with the same `{fields}`.
- The catalogues follow docs/glossary.md: a msgid that uses a glossary term is translated
  with the glossary's term.
- The demo workspace's report in ru and kk has no English sentence outside verbatim
  identifiers (`<code>`, SVG ids) and the team's own words quoted from its input files.
"""

from __future__ import annotations

import io
import re
import string
from pathlib import Path

import pytest
from babel.messages.extract import extract, extract_python
from babel.messages.pofile import read_po

import gpudecide
from gpudecide.i18n import catalogue, catalogue_of, catalogue_path, speaking
from tests.english import VisibleText, english_runs, team_words

SRC = Path(gpudecide.__file__).parent
ROOT = SRC.parent.parent
GLOSSARY = ROOT / "docs" / "glossary.md"
# The functions whose string arguments a person reads: `_`, `N_`, `P_` (a msgid),
# `_n(singular, plural, n)`, `message(domain, msgid)`, `nmessage(domain, singular, plural)`.
KEYWORDS = ("_", "N_", "P_", "_n", "message", "nmessage")
# Plural forms each translated catalogue must give (its Plural-Forms header).
NPLURALS = {"ru": 3, "kk": 2}
_FIELD = re.compile(r"\{[^}]*\}")
_DOMAIN_OF_FILE = re.compile(r"""\btranslator\(\s*["']([\w-]+)["']\s*\)""")
TRANSLATED = ("ru", "kk")


def _file_domain(path: Path, text: str) -> str:
    """The domain of a file's `_` / `N_` strings: its translator, else its package."""
    found = set(_DOMAIN_OF_FILE.findall(text))
    if len(found) == 1:
        return found.pop()
    rel = path.relative_to(SRC).parts
    return rel[0] if len(rel) > 1 else "report"


PLURALS: dict[str, dict[str, str]] = {}  # domain -> singular msgid -> English plural


def extract_msgids() -> dict[str, dict[str, str]]:
    """domain -> msgid -> where it was found, for every string a person reads (plurals by
    their singular, their English plural in PLURALS)."""
    out: dict[str, dict[str, str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if not any(k in text for k in ("_(", "message(", "_n(")):
            continue
        domain = _file_domain(path, text)
        for lineno, func, args, _comments in extract_python(
            io.BytesIO(text.encode()), list(KEYWORDS), [], {}
        ):
            where = f"{path.relative_to(SRC)}:{lineno}"
            strings = list(args) if isinstance(args, tuple | list) else [args]
            strings += [None] * 3
            if func == "nmessage":
                dom, singular, plural = strings[:3]
                if dom and singular and plural:
                    out.setdefault(dom, {})[singular] = where
                    PLURALS.setdefault(dom, {})[singular] = plural
            elif func == "_n":
                singular, plural = strings[:2]
                if singular and plural:
                    out.setdefault(domain, {})[singular] = where
                    PLURALS.setdefault(domain, {})[singular] = plural
            elif func == "message":
                dom, msgid = strings[:2]
                if dom and msgid:
                    out.setdefault(dom, {})[msgid] = where
            elif strings[0]:
                out.setdefault(domain, {})[strings[0]] = where
    for path in sorted((SRC / "report" / "templates").glob("*.j2")):
        for lineno, msg, _comments, _ctx in extract(
            "jinja2.ext:babel_extract", io.BytesIO(path.read_bytes()), keywords={"tr": None}
        ):
            text = msg[0] if isinstance(msg, tuple) else msg
            if text:
                out.setdefault("report", {})[text] = f"{path.relative_to(SRC)}:{lineno}"
    return out


MSGIDS = extract_msgids()
# Domains whose catalogues this test holds to completeness: every domain with a string.
DOMAINS = sorted(MSGIDS)


def _fields(text: str) -> set[str]:
    return {name for _lit, name, _spec, _conv in string.Formatter().parse(text) if name}


def test_extraction_finds_the_report_domains() -> None:
    """Babel finds the report, cost and artifacts strings (the extraction itself works)."""
    for domain in ("report", "cost", "artifacts"):
        assert domain in MSGIDS
    assert "Findings (C8)" in MSGIDS["cost"]
    assert "Export audit: can the run leave and resume?" in MSGIDS["artifacts"]
    assert "Evidence on record" in MSGIDS["report"]  # a `t` key's msgid (N_ in KEYS)
    assert "SPEC" in MSGIDS["report"]  # from the templates


@pytest.mark.parametrize("lang", TRANSLATED)
@pytest.mark.parametrize("domain", DOMAINS)
def test_catalogue_is_complete(domain: str, lang: str) -> None:
    """Every extracted msgid is translated (not empty, not fuzzy) with the same fields."""
    path = catalogue_path(domain, lang)
    assert path.is_file(), f"no catalogue {domain} for {lang}"
    parsed = read_po(io.BytesIO(path.read_bytes()), locale=lang, domain=domain)
    fuzzy = sorted(str(m.id) for m in parsed if m.id and m.fuzzy)
    empty = sorted(str(m.id) for m in parsed if m.id and not m.string)
    assert not fuzzy, f"{domain}/{lang}: fuzzy entries {fuzzy[:5]}"
    assert not empty, f"{domain}/{lang}: untranslated entries {empty[:5]}"
    plurals = PLURALS.get(domain, {})
    have = catalogue(domain, lang)
    forms = catalogue_of(domain, lang).plurals
    lacking = sorted(
        f"{where}: {m!r}"
        for m, where in MSGIDS[domain].items()
        if (m not in forms if m in plurals else m not in have)
    )
    assert not lacking, f"{domain}/{lang} lacks {len(lacking)}: " + "; ".join(lacking[:8])
    wrong = sorted(m for m in MSGIDS[domain] if m not in plurals and _fields(m) != _fields(have[m]))
    assert not wrong, f"{domain}/{lang}: fields differ in {wrong[:5]}"
    for singular, plural in plurals.items():
        assert len(forms[singular]) == NPLURALS[lang], f"{domain}/{lang}: forms of {singular!r}"
        for form in forms[singular]:
            # A form may leave out the count ("один ..."), never add a field.
            assert _fields(form) <= _fields(singular) | _fields(plural), (domain, form)


def test_catalogue_check_catches_a_missing_string(tmp_path: Path) -> None:
    """Negative case: a catalogue without one msgid is reported as lacking it."""
    have = dict(catalogue("cost", "ru"))
    have.pop("Findings (C8)")
    assert "Findings (C8)" not in have and "Findings (C8)" in MSGIDS["cost"]


# --- the glossary ---


def glossary() -> list[tuple[str, str, str]]:
    """(en, ru stem, kk stem) of every term in docs/glossary.md's table."""
    rows = []
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 5 and cells[0] and not set(cells[0]) <= {"-", " "} and cells[0] != "en":
            rows.append((cells[0], cells[3], cells[4]))
    return rows


def test_glossary_has_the_domain_terms() -> None:
    """The glossary names the terms the issue lists, each with ru and kk stems."""
    terms = {en for en, _ru, _kk in glossary()}
    for term in (
        "GPU-hour",
        "utilisation",
        "SLO",
        "stop factor",
        "evidence",
        "checkpoint",
        "export",
        "managed endpoint",
        "dedicated pool",
        "hybrid",
        "queue wait",
        "preemption",
    ):
        assert term in terms, term
    assert all(ru and kk for _en, ru, kk in glossary())


# Msgids where a glossary word means something else: typer's "Options" panel lists
# command-line options, not the deployment options the glossary names.
_NOT_THE_TERM = {("cli", "Options")}


@pytest.mark.parametrize("lang", TRANSLATED)
def test_catalogues_follow_the_glossary(lang: str) -> None:
    """A msgid that uses a glossary term is translated with the glossary's term (its stem)."""
    index = 1 if lang == "ru" else 2
    misses = []
    for row in glossary():
        en, stem = row[0], row[index]
        # The term and its plural, not inside a longer word ("SLO" is not "slow").
        # Not inside a package extra's brackets ("gpudecide[marks]" names an extra).
        pattern = re.compile(
            rf"(?<![\w\[-]){re.escape(en)}(?:s|\(s\))?(?![\w\]-]|\.\w)", re.IGNORECASE
        )
        stems = [s.strip().lower() for s in stem.split("/")]
        for domain in (
            "report",
            "cost",
            "artifacts",
            "jobs",
            "queue",
            "cli",
            "decision",
            "marks",
            "attest",
        ):
            for msgid, text in catalogue(domain, lang).items():
                if (domain, msgid) in _NOT_THE_TERM:
                    continue
                prose = _FIELD.sub(" ", msgid)  # {option} is a field, not the word
                if pattern.search(prose) and not any(s in text.lower() for s in stems):
                    misses.append(f"{domain}: {msgid!r} -> {text!r} lacks {stem!r}")
    assert not misses, f"{len(misses)} off-glossary: " + "; ".join(misses[:6])


# --- the report in ru and kk ---


@pytest.fixture(scope="module")
def demo_reports(
    demo_workspace: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, tuple[str, Path]]:
    """The demo workspace's report in ru and kk (HTML) and the workspace root (a copy of the
    session's demo workspace)."""
    import shutil

    from gpudecide import sections
    from gpudecide import workspace as wsmod
    from gpudecide.report import i18n, render

    # The renderer's templates take `tr` & co. from i18n.install (idempotent; see below).
    i18n.install(render._ENV)
    root = tmp_path_factory.mktemp("demo") / "ws"
    shutil.copytree(demo_workspace, root, symlinks=True)
    out: dict[str, tuple[str, Path]] = {}
    for lang in TRANSLATED:
        paths = sections.build_report(wsmod.load(root), root / f"report-{lang}", lang)
        out[lang] = (paths["html"].read_text(encoding="utf-8"), root)
    return out


def test_renderer_installs_the_translator() -> None:
    """The renderer gives its templates the translator (`i18n.install(_ENV)` in render.py)."""
    import importlib

    from gpudecide.report import render

    fresh = importlib.reload(render)
    assert "tr" in fresh._ENV.globals


def _sections() -> list[str]:
    """Every section of the report (the index and header first), by evidence kind."""
    from gpudecide.sections import SECTIONS

    return ["head", *SECTIONS]


@pytest.mark.parametrize("lang", TRANSLATED)
@pytest.mark.parametrize("kind", _sections())
def test_report_has_no_english_sentence(
    demo_reports: dict[str, tuple[str, Path]], lang: str, kind: str
) -> None:
    """Visible text of one section of the ru/kk report: no English outside identifiers."""
    html, root = demo_reports[lang]
    assert f'<html lang="{lang}">' in html
    parser = VisibleText()
    parser.feed(html)
    quoted = team_words(root)
    head = ("head", "evidence", "evidence-state")
    texts = [t for s, t in parser.texts if s == kind or (kind == "head" and s in head)]
    if kind != "head" and not any(s == kind for s, _t in parser.texts):
        pytest.skip(f"the demo writes no {kind} evidence")  # e.g. a kind another input needs
    assert texts
    english = [(t, runs) for t in texts if (runs := english_runs(t, quoted))]
    assert not english, f"{len(english)} English texts in {kind}: " + " | ".join(
        f"{t[:90]!r} {r[:4]}" for t, r in english[:8]
    )


def test_english_detector_catches_prose() -> None:
    """Negative and boundary cases of the detector the report test relies on."""
    assert english_runs("cheapest normal month: kz-local", []) == ["cheapest", "normal", "month"]
    assert english_runs("самый дешёвый: kz-local, 8 GPU, KZT", []) == []
    assert english_runs("quote Q-2026-031 §2", ["quote Q-2026-031 §2"]) == []
    assert english_runs("managed.0.price_per_gpu_hour.amount", []) == []
    assert english_runs("replay of 8 GPUs", []) == ["replay", "of"]


# --- the mechanism: numbers, messages, patterns ---


def test_english_figures_keep_their_historic_form() -> None:
    """English output is byte-identical to the f-strings it replaced."""
    from decimal import Decimal

    from gpudecide.fmt import fmt, hours, money, num, pct, pct0

    assert fmt(1234.5) == "1,234.5" and fmt(1290966) == "1,290,966" and fmt(None) == "n/a"
    assert pct(0.2083) == "20.8%" and pct0(0.2) == "20%" and hours(5400) == "1.5 h"
    assert money("1290966.4") == "1,290,966" and money("35587.371", 2) == "35,587.37"
    assert num(Decimal("3.2320"), 3) == "3.232" and num(Decimal("194.66"), 1) == "194.7"


@pytest.mark.parametrize(
    ("lang", "grouped", "share", "hour", "absent"),
    [
        ("ru", "1\u00a0290\u00a0966", "20,8%", "1,5 ч", "н/д"),
        ("kk", "1\u00a0290\u00a0966", "20,8%", "1,5 сағ", "ж/ж"),
    ],
)
def test_figures_in_the_readers_locale(
    lang: str, grouped: str, share: str, hour: str, absent: str
) -> None:
    """Babel groups and separates per locale; absent figures say so in the language."""
    from gpudecide.fmt import fmt, hours, money, pct

    with speaking(lang):  # type: ignore[arg-type]
        assert money("1290966.4", 0) == grouped
        assert fmt(1290966) == grouped
        assert pct(0.2083) == share
        assert hours(5400) == hour
        assert fmt(None) == absent and pct(None) == absent


def test_a_stored_message_renders_in_every_language() -> None:
    """A finding stored as message id + arguments reads the same in English as before and
    in Russian and Kazakh with locale numbers; a message inside a message is rendered too."""
    from gpudecide.message import message, render

    seen = message("cost", "observed: {seen}", seen=["3.3%", "7.1%"])
    msg = message(
        "cost",
        "{dedicated} is cheaper than {managed} only above {u:pct} useful utilisation of its "
        "{gpus}-GPU pool; {seen}",
        dedicated="owned-8xh100",
        managed="kz-local",
        u=0.254,
        gpus=8,
        seen=seen,
    )
    assert render(msg) == (
        "owned-8xh100 is cheaper than kz-local only above 25.4% useful utilisation of its "
        "8-GPU pool; observed: 3.3%, 7.1%"
    )
    with speaking("ru"):
        ru = render(msg)
    assert ru.startswith("owned-8xh100 дешевле kz-local") and "25,4%" in ru and "3.3%" in ru
    assert "полезной загрузке" in ru and "observed" not in ru
    with speaking("kk"):
        kk = render(msg)
    assert "25,4%" in kk and "жүктеме" in kk and "observed" not in kk


def test_command_lines_follow_the_language(tmp_path: Path) -> None:
    """A command's human lines: the record's own in English, its stored messages in ru, with
    the plural form each count takes."""
    from gpudecide import evidence as ev
    from gpudecide.message import message, nmessage, record_texts
    from gpudecide.report.i18n import command_lines

    summary = message(
        "artifacts",
        "{head}; {hazards}; {missing}; {open}",
        head=message("artifacts", "weights only: not resumable"),
        hazards=nmessage("artifacts", "{n} hazard", "{n} hazards", n=3),
        missing=nmessage("artifacts", "{n} E2 item missing", "{n} E2 items missing", n=10),
        open=nmessage("artifacts", "{n} A8 question open", "{n} A8 questions open", n=1),
    )
    note = message(
        "artifacts",
        "an adapter is usable only with the exact base model it was trained on (E5)",
    )
    texts = record_texts(summary, [note])
    record = ev.Evidence(
        kind="audit",
        title="Export audit: can the run leave and resume?",
        spec_ids=["E2"],
        verdict="fail",
        summary=texts.summary,
        figures={"messages": texts.messages},
        notes=texts.notes,
        inputs=[],
    )
    assert command_lines(record) == [
        "weights only: not resumable; 3 hazards; 10 E2 items missing; 1 A8 question open",
        "note: an adapter is usable only with the exact base model it was trained on (E5)",
    ]
    with speaking("ru"):
        ru = command_lines(record)
    assert ru[0].startswith("только веса: продолжить обучение нельзя; "), ru[0]
    assert "3 риска" in ru[0] and "10 " in ru[0] and "hazard" not in ru[0], ru[0]
    assert ru[1].startswith("примечание: адаптер работает только")


@pytest.mark.parametrize("value", [0.0385, 0.125, 2 / 3, 1e-4, 0.9995, 0.0])
def test_a_figure_rounds_the_same_in_every_language(value: float) -> None:
    """Boundary: halves and near-halves round once, as in English; only the signs differ."""
    from gpudecide.fmt import fmt, hours, pct

    english = (pct(value), fmt(value * 1000).replace(",", ""), hours(value * 3600 * 10))
    for lang in TRANSLATED:
        with speaking(lang):  # type: ignore[arg-type]
            said = (pct(value), fmt(value * 1000), hours(value * 3600 * 10))
        assert said[0].replace(",", ".") == english[0]
        assert said[1].replace("\u00a0", "").replace(",", ".") == english[1]
        assert said[2].split()[0].replace(",", ".") == english[2].split()[0]


def test_a_stale_record_says_why_in_russian(
    demo_reports: dict[str, tuple[str, Path]], tmp_path: Path
) -> None:
    """A changed input: the ru report marks the record stale and says why in Russian."""
    import shutil

    from gpudecide import sections
    from gpudecide import workspace as wsmod

    root = tmp_path / "ws"
    shutil.copytree(demo_reports["ru"][1], root)
    with (root / "costs.yaml").open("a", encoding="utf-8") as fh:
        fh.write("\n# edited after the analysis\n")
    ws = wsmod.load(root)
    ws.config.report.language = "ru"
    html = sections.build_report(ws, root / "out")["html"].read_text(encoding="utf-8")
    why = "costs.yaml: вход изменился после расчёта доказательства"
    assert f"УСТАРЕЛО: вход изменился: {why}" in html
    parser = VisibleText()
    parser.feed(html)
    stale = [t for s, t in parser.texts if s == "cost" and "УСТАРЕЛО" in t]
    assert stale and not english_runs(stale[0], [])


def test_a_quoted_word_inside_a_path_leaves_the_path_whole() -> None:
    """The team's word `export-test` inside `new/export-test.yaml` does not leave "yaml"."""
    assert english_runs("/tmp/new/export-test.yaml", ["export-test"]) == []
    assert english_runs("export-test.yaml создан", ["export-test"]) == []
    assert english_runs("export-test failed", ["export-test"]) == ["failed"]
