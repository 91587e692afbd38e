"""The base of the drills' figure models (`drill_figures`, `cordon_figures`).

A model holds exactly the keys a producer writes (`extra="forbid"`), with the JSON types it
writes, so `model_dump(mode="json")` is the record's figures key for key and a sealed record
keeps its content hash. A key a record did not hold (one drill's own details, the game day
of a record written by a single drill before game days) is left out of the JSON again,
while a key it held as null stays null: what is dumped is what was given.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

__all__ = ["Figure", "RecordMessages"]


class Figure(BaseModel):
    """A part of a drill or cordon record's figures."""

    model_config = ConfigDict(extra="forbid")

    @model_serializer(mode="wrap")
    def _as_given(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        return {k: v for k, v in out.items() if k in self.model_fields_set}


class RecordMessages(Figure):
    """`figures["messages"]`: the record's summary and notes as messages
    (`gpudecide.message`), one per note, so that a reader hears them in their language."""

    summary: dict[str, Any]
    notes: list[dict[str, Any]] = Field(default_factory=list)
