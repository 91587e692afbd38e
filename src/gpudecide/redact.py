"""Credentials out of everything a person archives (issue 28: a token in a job name reached
the queue record and report.json; one in a YAML description reached the decision record and
index.html).

Text from the team's inputs enters gpudecide's records and reports at a few edges (job
names and comments, free-text fields of the YAML files, paths, a tool's error output); the
evidence writer and the report renderer pass every string through `redact`, so no record or
report holds a credential whatever produced it. What is masked, keeping enough to recognise
the place:

- well-known token shapes by prefix (GitHub, Hugging Face, AWS access key ids, OpenAI,
  Slack, GitLab, Google API keys, Stripe): `ghp_***`;
- an assignment to a secret-named key in any common syntax (`password=...`,
  `aws_secret_access_key = ...`, `"token": "..."`, `export HF_TOKEN=...`,
  `Authorization: Bearer ...`): the key stays, the value becomes `***`;
- the password of a URL's user information (`s3://user:secret@host`): `user:***@`.

Digests (hexadecimal SHA-256) and ids are not credentials and stay as they are.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

__all__ = ["MASK", "looks_like_credential", "redact", "redact_all"]

MASK = "***"

# Known prefixes, each followed by the token's body.
_PREFIXED = re.compile(
    r"\b(gh[pousr]_|github_pat_|hf_|xox[abpr]-|glpat-|sk_live_|rk_live_)[A-Za-z0-9_\-]{16,}"
    r"|\b(sk-(?:proj-)?)[A-Za-z0-9_\-]{20,}"
    r"|\b(AKIA|ASIA)[0-9A-Z]{16}\b"
    r"|\b(AIza)[0-9A-Za-z_\-]{35}"
)
# key <sep> value, the key naming a secret; the value runs to whitespace, a quote or ;,&
# The key must end with the secret word: `hf_token=` is one, `tokens_per_second=` is not.
# The match starts at the secret word: whatever precedes it in the key (`aws_`, `db.`)
# stays as it is, so it need not be matched, and a long run of key characters costs one
# scan, not one from every word start.
_SECRET_WORD = (
    r"(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|"
    r"private[_-]?key|credentials?|authorization)"
)
_ASSIGNED = re.compile(
    rf"(?i)(?P<key>{_SECRET_WORD}[\"']?\s*[:=]\s*[\"']?)"
    r"(?!(?:bearer|basic)\b|\*\*\*)(?P<value>[^\s\"',;&]{3,})"
)
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9+/=._\-]{8,}")
# A scheme starts where no scheme character precedes it and is at most 32 long (RFC 3986
# sets no limit; none in use comes near): a long run of letters is then scanned once.
_USERINFO = re.compile(
    r"(?P<head>(?<![a-z0-9+.\-])[a-z][a-z0-9+.\-]{0,31}://[^/\s:@]{1,256}):(?P<pw>[^/\s@]{1,256})@"
)
# An unbroken run of token characters mixing letters and digits (not a hex digest).
_TOKEN = re.compile(r"[A-Za-z0-9+/_\-]{32,}={0,2}")
_HEX = re.compile(r"[0-9a-f]{32,}")


# A record's figures repeat the same few hundred keys and ids thousands of times (the
# decision record: 4,300 strings, 570 distinct): a short text is scanned once a run, and
# the cache holds at most _CACHED x _SHORT characters (issue 25).
_SHORT = 256
_CACHED = 8192


def redact(text: str) -> str:
    """`text` with every credential it holds masked."""
    if not text:
        return text
    return _masked_short(text) if len(text) <= _SHORT else _masked(text)


def _masked(text: str) -> str:
    out = _PREFIXED.sub(lambda m: next(g for g in m.groups() if g) + MASK, text)
    out = _USERINFO.sub(lambda m: f"{m.group('head')}:{MASK}@", out)
    out = _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", out)
    return _ASSIGNED.sub(lambda m: m.group("key") + MASK, out)


_masked_short = lru_cache(maxsize=_CACHED)(_masked)


def redact_all(obj: Any) -> Any:
    """Every string of a JSON-like value redacted (keys too); the same object when nothing
    needed masking."""
    if isinstance(obj, str):
        return redact(obj)
    if isinstance(obj, list):
        return [redact_all(v) for v in obj]
    if isinstance(obj, dict):
        return {redact(str(k)) if isinstance(k, str) else k: redact_all(v) for k, v in obj.items()}
    return obj


def looks_like_credential(text: str) -> bool:
    """Whether `text` holds something shaped like a key or token: what `redact` masks, or a
    run of 32+ token characters mixing letters and digits that is not a hex digest."""
    if redact(text) != text:
        return True
    for run in _TOKEN.findall(text):
        if _HEX.fullmatch(run.lower()) and run == run.lower():
            continue
        if any(c.isdigit() for c in run) and any(c.isalpha() for c in run):
            return True
    return False
