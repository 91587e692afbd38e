"""What every decision rule may read besides its record: the options and the team's settings."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpudecide import evidence as ev
from gpudecide.decision.schema import MatrixConfig
from gpudecide.options import OptionDecl


@dataclass
class RuleContext:
    """The declared options, the matrix settings, and the newest records: of every kind, and
    of every kind and option (records about one option name it in `figures["option"]`)."""

    options: list[OptionDecl]
    matrix: MatrixConfig = field(default_factory=MatrixConfig)
    newest: dict[str, ev.Evidence] = field(default_factory=dict)
    by_option: dict[tuple[str, str | None], ev.Evidence] = field(default_factory=dict)

    def of(self, kind: str, option: str) -> ev.Evidence | None:
        """The newest record of `kind` about `option` (an export test, an audit, a drill)."""
        return self.by_option.get((kind, option))

    def ids(self, *kinds: str) -> list[str]:
        """Ids of the declared options of these kinds (all when none given)."""
        return [o.id for o in self.options if not kinds or o.kind in kinds]

    def option(self, option_id: str) -> OptionDecl | None:
        """The declared option with this id."""
        return next((o for o in self.options if o.id == option_id), None)

    def pool_gpus(self, option_id: str) -> int | None:
        """GPUs of a dedicated option's pool, as the cost evidence priced it."""
        cost = self.newest.get("cost")
        if cost is None:
            return None
        for o in cost.figures.get("options", []):
            if o.get("id") == option_id and o.get("peak_check"):
                gpus = o["peak_check"].get("pool_gpus")
                return int(gpus) if gpus is not None else None
        return None
