"""The base of the queue's figure models: one pydantic model per part of a `queue` or
`replay` record's figures (`gpudecide.queue.figures`, `gpudecide.queue.restarts`).

A model holds exactly the keys the producer writes (`extra="forbid"`), with the JSON types
it writes (an `int` stays an int, a `float` a float), so `model_dump(mode="json")` is the
record's figures key for key and a sealed record keeps its content hash. A key the producer
writes only sometimes (the peak window's size, an older record's messages) is named in
`OMIT_NONE` and left out of the JSON while it is None.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from gpudecide.figure_model import FigureModel

__all__ = ["Figure", "QueueContour", "RecordMessages"]


class Figure(FigureModel):
    """A part of a queue or replay record's figures."""


class RecordMessages(Figure):
    """`figures["messages"]`: the record's summary and notes as messages
    (`gpudecide.message`), one per note, so that a reader hears them in their language."""

    summary: dict[str, Any]
    notes: list[dict[str, Any]] = Field(default_factory=list)


class QueueContour(Figure):
    """`figures["contour"]` of a queue record that names an option: what its logs exercised,
    in the shape every run record states it (`gpudecide.decision.contour`)."""

    executor: str | None
    cluster: str = ""
    context: str = ""
    host: str = ""
    storage: str = ""
    artifacts: str | None = None
