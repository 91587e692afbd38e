"""gpudecide: decide where to fine-tune from evidence the team produces itself."""

from __future__ import annotations

__all__ = ["__version__", "tool_version"]

# The one place the version is written (pyproject.toml reads it from here): every record
# states it, and looking it up in the installed metadata cost each run ~2 ms (issue 25).
__version__ = "0.1.0"


def tool_version() -> str:
    """The version of gpudecide that is running (every record and report states it)."""
    return __version__
