"""`sign` and `verify` in Russian and Kazakh: every line a person reads, failures and bad key
files included, is in the reader's language with the glossary's terms; key ids, paths and
names stay as written; counts take the right plural form."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpudecide.attest import signature_of
from gpudecide.i18n import catalogue, catalogue_of, speaking, translator
from tests.attest_fixtures import (
    _fresh_run,  # noqa: F401 (autouse)
    add_record,
    ed25519_key,
    invoke,
    make_workspace,
    p256_key,
)
from tests.english import english_lines
from tests.i18n.test_catalogues import glossary

TRANSLATED = ("ru", "kk")
_HEX = re.compile(r"\b[0-9a-f]{64}\b")


def _said(output: str) -> str:
    """The output without the `commands` it quotes: they stay as written."""
    return re.sub(r"`[^`]*`", " ", output)


def _quoted(root: Path, output: str) -> list[str]:
    """What the output quotes as written: paths, key ids, the signer's declared name."""
    from gpudecide import evidence as ev

    who = ev.producer(root)
    return [str(root), who.author, who.host, *_HEX.findall(output)]


@pytest.mark.parametrize("lang", TRANSLATED)
def test_sign_and_verify_speak_the_language(tmp_path: Path, lang: str) -> None:
    ws = make_workspace(tmp_path / "ws", language=lang)
    key = ed25519_key(tmp_path / "keys")
    other = ed25519_key(tmp_path / "other", "other")
    signed = invoke("sign", str(ws.root), "--key", str(key.private))
    good = invoke("verify", str(ws.root), "--pub", str(key.public))
    assert (signed.exit_code, good.exit_code) == (0, 0), signed.output + good.output
    add_record(ws, "extra")
    (ws.root / "logs" / "jobs.txt").write_text("changed\n")
    bad = invoke("verify", str(ws.root), "--pub", str(other.public))
    assert bad.exit_code == 1
    refused = invoke("sign", str(ws.root), "--key", str(key.private))
    assert refused.exit_code == 1
    for res in (signed, good, bad, refused):
        out = res.output
        assert english_lines(_said(out), ws.root, _quoted(ws.root, out)) == [], out
    said = catalogue("attest", lang)
    assert said["signature good: key {keyid}"].split("{")[0] in good.output
    assert (
        said["{name}: added after signing (the signature does not cover it)"].split(": ")[1][:12]
        in bad.output
    )


@pytest.mark.parametrize("lang", TRANSLATED)
def test_not_signed_and_bad_keys_speak_the_language(tmp_path: Path, lang: str) -> None:
    ws = make_workspace(tmp_path / "ws", language=lang)
    key = p256_key(tmp_path / "keys")
    env = {"GPUDECIDE_LANG": lang}
    missing = invoke("verify", str(ws.root), "--pub", str(key.public), env=env)
    assert missing.exit_code == 1
    errors = [
        invoke("sign", str(ws.root), "--key", str(key.public), env=env),
        invoke("sign", str(ws.root), "--key", str(key.private), env=env),
        invoke("verify", str(ws.root), "--pub", str(key.private), env=env),
        invoke(
            "sign",
            str(ws.root),
            "--key",
            str(key.private),
            env={**env, "GPUDECIDE_KEY_PASSPHRASE": "wrong"},
        ),
    ]
    for res in (missing, *errors):
        quoted = [str(ws.root), str(key.public), str(key.private)]
        assert english_lines(_said(res.output), ws.root, quoted) == [], res.output
    for res in errors:
        assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1, res.output
        assert res.stderr.startswith(catalogue("errors", lang)["error"] + ": ")


@pytest.mark.parametrize("lang", TRANSLATED)
def test_the_report_block_speaks_the_language(tmp_path: Path, lang: str) -> None:
    ws = make_workspace(tmp_path / "ws")
    key = ed25519_key(tmp_path / "keys")
    assert invoke("sign", str(ws.root), "--key", str(key.private)).exit_code == 0
    add_record(ws, "extra")
    shown = signature_of(ws)
    assert shown is not None
    with speaking(lang):
        lines = [f"{r.label}: {r.value}" for r in shown.rows() if not r.verbatim]
        lines += [r.label for r in shown.rows()] + [shown.status()]
    assert english_lines(_said("\n".join(lines)), ws.root, []) == [], lines


def test_counts_take_the_right_plural_form() -> None:
    _n = translator("attest").n
    with speaking("ru"):
        forms = [
            _n("verify failed: {n} problem", "verify failed: {n} problems", n).format(n=n)
            for n in (1, 3, 5, 21)
        ]
    assert forms == [
        "проверка не пройдена: 1 проблема",
        "проверка не пройдена: 3 проблемы",
        "проверка не пройдена: 5 проблем",
        "проверка не пройдена: 21 проблема",
    ]
    with speaking("kk"):
        assert (
            _n("verify failed: {n} problem", "verify failed: {n} problems", 4).format(n=4)
            == "тексеріс өтпеді: 4 мәселе"
        )
    assert len(catalogue_of("attest", "ru").plurals) == len(catalogue_of("attest", "kk").plurals)


@pytest.mark.parametrize("lang", TRANSLATED)
def test_attest_catalogue_follows_the_glossary(lang: str) -> None:
    """The rule of tests/i18n/test_catalogues.py (a msgid with a glossary term is translated
    with the term's stem), applied to this domain."""
    index = 1 if lang == "ru" else 2
    misses = []
    for row in glossary():
        en, stems = row[0], [s.strip().lower() for s in row[index].split("/")]
        pattern = re.compile(rf"(?<![\w-]){re.escape(en)}(?:s|\(s\))?(?![\w-]|\.\w)", re.I)
        for msgid, text in catalogue("attest", lang).items():
            prose = re.sub(r"\{[^}]*\}", " ", msgid)
            if pattern.search(prose) and not any(s in text.lower() for s in stems):
                misses.append(f"{msgid!r} -> {text!r} lacks {row[index]!r}")
        for singular, forms in catalogue_of("attest", lang).plurals.items():
            if pattern.search(re.sub(r"\{[^}]*\}", " ", singular)):
                misses += [
                    f"{singular!r}: {f!r}" for f in forms if not any(s in f.lower() for s in stems)
                ]
    assert not misses, misses
