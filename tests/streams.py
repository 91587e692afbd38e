"""Streams the scanners must cope with, shared by the pickle tests."""

from __future__ import annotations

import io


class NoSeek:
    """A stream that can only be read: no seek, no tell, no peek (a pipe, a zip member read
    without rewinding)."""

    def __init__(self, data: bytes) -> None:
        self._b = io.BytesIO(data)

    def read(self, n: int = -1) -> bytes:
        return self._b.read(n)

    def readline(self, n: int = -1) -> bytes:
        return self._b.readline(n)
