"""One finding of a governance check: which option, whether it stops it, what was found.

A finding is kept in the evidence record as plain data (`as_dict`): its stable `id`, the
option id, `stop` (a stop factor for that option, SPEC D5), the SPEC id it rests on, the
parameters of its message and the English text. The report re-words it in the reader's
language from `id` and `params` (`messages.render`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpudecide.evidence import Verdict
from gpudecide.governance import messages

Params = dict[str, Any]


@dataclass(frozen=True)
class Finding:
    """Something a check found about one option."""

    id: str
    option: str
    stop: bool
    spec: str
    text: str
    params: Params = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """The form stored in evidence figures."""
        return {
            "id": self.id,
            "option": self.option,
            "stop": self.stop,
            "spec": self.spec,
            "text": self.text,
            "params": self.params,
        }


def finding(fid: str, option: str, stop: bool, spec: str, **params: Any) -> Finding:
    """A finding with its English text (`messages`), as every check makes one."""
    return Finding(fid, option, stop, spec, messages.english_text(fid, params), params)


def verdict_of(findings: list[Finding]) -> Verdict:
    """fail when any finding stops an option, warn when any other is left, else pass."""
    if any(f.stop for f in findings):
        return "fail"
    return "warn" if findings else "pass"
