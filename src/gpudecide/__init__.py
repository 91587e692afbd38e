"""gpudecide: decide where to fine-tune from evidence the team produces itself."""

from __future__ import annotations

from functools import cache

__all__ = ["__version__", "tool_version"]


@cache
def tool_version() -> str:
    """The installed package's version ("0.0.0+unknown" in a source tree not installed)."""
    # importlib.metadata (and the email parser under it) is loaded only when a version is
    # asked for: most commands never print or record one (issue 25, start-up).
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gpudecide")
    except PackageNotFoundError:
        return "0.0.0+unknown"


def __getattr__(name: str) -> str:
    if name == "__version__":
        return tool_version()
    raise AttributeError(f"module 'gpudecide' has no attribute {name!r}")
