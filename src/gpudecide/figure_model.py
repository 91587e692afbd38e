"""The base of every analysis's typed figures (`Evidence.figures`): a strict model whose
`model_dump(mode="json")` is the dict the record stores, with the fields named in
`OMIT_NONE` left out while they are None (a record never held them then), so that a typed
model writes exactly the shape older records have."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

__all__ = ["FigureModel"]


class FigureModel(BaseModel):
    """Figures of a record, or a part of them; unknown keys are refused."""

    model_config = ConfigDict(extra="forbid")
    OMIT_NONE: ClassVar[frozenset[str]] = frozenset()

    @model_serializer(mode="wrap")
    def _omit_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        for key in self.OMIT_NONE:
            if key in out and out[key] is None:
                del out[key]
        return out
