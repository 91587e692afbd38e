"""The base of every analysis's typed figures (`Evidence.figures`): a strict model whose
`model_dump(mode="json")` is the dict the record stores, with the fields named in
`OMIT_NONE` left out while they are None (a record never held them then), so that a typed
model writes exactly the shape older records have."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from gpudecide.message import is_message

__all__ = ["FigureModel", "StoredMessage"]


def _message(value: Mapping[str, Any]) -> Mapping[str, Any]:
    if not is_message(value):
        raise ValueError("not a stored message (domain, msgid, args)")
    return value


# A `gpudecide.message.Message` as a figures field holds it (its JSON dict, checked).
StoredMessage = Annotated[Mapping[str, Any], AfterValidator(_message)]


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
