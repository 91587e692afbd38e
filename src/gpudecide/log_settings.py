"""The job-log settings a workspace declares and validates (gpudecide.yaml `logs:`,
`timezone:`, `classify:`), with nothing heavier than pydantic behind them.

`gpudecide.workspace` reads these when it loads gpudecide.yaml; the readers of job logs
(`jobs.load`) and the classification (`jobs.classify`) use the same types. A setting that
only a log or a classification can check (a regex in DuckDB's RE2) imports its engine when
it is checked, not when the workspace is read.
"""

from __future__ import annotations

from typing import Annotated, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from gpudecide.errors import InputError, TemplateError

__all__ = [
    "DEFAULT_RULES",
    "ClassifyConfig",
    "IanaZone",
    "Kind",
    "KindRule",
    "is_zone",
    "validate_rules",
]


def is_zone(tz: str) -> bool:
    """Whether `tz` names an IANA time zone this machine knows."""
    try:
        ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


def _zone_field(tz: str) -> str:
    if not is_zone(tz):
        raise TemplateError(
            "unknown time zone {tz} (use an IANA name such as Asia/Almaty)", tz=repr(tz)
        )
    return tz


# A time-zone field of an input file, reported by pydantic with its line.
IanaZone = Annotated[str, AfterValidator(_zone_field)]


Kind = Literal["train", "smoke", "restart", "eval", "merge", "quantize", "export", "other"]


class KindRule(BaseModel):
    """A job-name rule: the first rule whose pattern matches gives the kind."""

    model_config = ConfigDict(extra="forbid")

    kind: Kind = Field(description="Kind given to jobs whose name matches.")
    pattern: str = Field(
        description="Regular expression (RE2 syntax) searched in the job name, case-insensitive."
    )


DEFAULT_RULES: tuple[KindRule, ...] = (
    KindRule(kind="smoke", pattern=r"smoke|sanity|dry[-_]?run|debug|probe|canary|hpo|sweep|trial"),
    KindRule(kind="restart", pattern=r"resume|restart|retry|requeue"),
    KindRule(kind="eval", pattern=r"eval|bench|valid|judge|score"),
    KindRule(kind="merge", pattern=r"merge"),
    KindRule(kind="quantize", pattern=r"quant|awq|gptq|int4|int8|fp8"),
    KindRule(kind="export", pattern=r"export|convert|gguf|onnx|publish|upload"),
    KindRule(kind="train", pattern=r"train|finetune|fine-tune|sft|dpo|lora|^ft[-_]"),
)


class ClassifyConfig(BaseModel):
    """How jobs get their kind (workspace `classify:` section)."""

    model_config = ConfigDict(extra="forbid")

    rules: list[KindRule] | None = Field(
        default=None, description="Replaces the built-in name rules when given."
    )
    extra_rules: list[KindRule] = Field(
        default_factory=list, description="Checked before the built-in (or replacing) rules."
    )
    restart_window_hours: float = Field(
        default=72.0,
        gt=0,
        description="A failed job re-submitted within this many hours counts as a restart.",
    )

    def effective_rules(self) -> list[KindRule]:
        """Team rules first, then the built-in ones unless replaced."""
        base = list(DEFAULT_RULES) if self.rules is None else self.rules
        return [*self.extra_rules, *base]


def validate_rules(rules: list[KindRule], where: str, field: str = "classify.rules") -> None:
    """Every pattern must compile in the regex engine that will run it (DuckDB's RE2)."""
    if not rules:
        return
    # The engine is loaded only when there is a rule to check: reading a workspace stays light.
    import duckdb

    con = duckdb.connect()
    try:
        for i, rule in enumerate(rules):
            try:
                con.execute("SELECT regexp_matches('x', ?, 'i')", [rule.pattern]).fetchall()
            except duckdb.Error as exc:
                raise InputError(
                    "pattern {pattern} is not a valid regular expression: {error}",
                    path=where,
                    field=f"{field}[{i}].pattern",
                    hint="RE2 syntax: no look-ahead or back-references",
                    pattern=repr(rule.pattern),
                    error=str(exc).splitlines()[0],
                ) from None
    finally:
        con.close()
