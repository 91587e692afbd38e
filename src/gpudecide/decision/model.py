"""The findings contract, kept importable here for rules not yet importing
`gpudecide.findings` (its one declaration)."""

from __future__ import annotations

from typing import Any

from gpudecide.findings import CRITERIA, StopFactor, Suggestion

__all__ = ["CRITERIA", "Message", "StopFactor", "Suggestion"]

# The message type older rules annotate with; `gpudecide.message.Message` is the one type.
Message = dict[str, Any]
