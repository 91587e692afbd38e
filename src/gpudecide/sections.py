"""Every analysis package's report section, in report order (DESIGN: one registry), and
the workspace report built from them.

A new analysis adds one line here; the renderer (`gpudecide.report.render`) knows no
analysis by name.
"""

from __future__ import annotations

from pathlib import Path

from gpudecide import evidence as ev
from gpudecide.artifacts.report import audit_section
from gpudecide.attest import signature_of
from gpudecide.cost.report import cost_section
from gpudecide.decision.context import standing
from gpudecide.decision.report import decision_overview, decision_section, hybrid_section
from gpudecide.drills.report import cordon_section, drills_section
from gpudecide.governance.report import governance_section
from gpudecide.i18n import Language, speaking
from gpudecide.jobs.report import profile_section
from gpudecide.portability.report import export_test_section
from gpudecide.queue.report import queue_section, replay_section
from gpudecide.report import render
from gpudecide.report.model import SectionBuilder
from gpudecide.workspace import Workspace

__all__ = ["SECTIONS", "build_report"]


SECTIONS: dict[str, SectionBuilder] = {
    "decision": decision_section,
    "profile": profile_section,
    "queue": queue_section,
    "replay": replay_section,
    "cost": cost_section,
    "audit": audit_section,
    "export_test": export_test_section,
    "drill": drills_section,
    "cordon": cordon_section,
    "raci": governance_section,
    "standard_path": governance_section,
    "isolation": governance_section,
    "residency": governance_section,
    "secrets": governance_section,
    "hybrid": hybrid_section,
}


def build_report(
    ws: Workspace,
    out_dir: Path | None = None,
    language: Language | None = None,
    *,
    pdf: bool = False,
) -> dict[str, Path]:
    """Render the workspace's evidence into report/ (HTML, Markdown, JSON) in `language`
    (default: the workspace's report.language); damaged record files are listed in the
    report and the rest still render."""
    snapshot = ev.Snapshot(ws.root)
    records, damaged = snapshot.scan(ws.evidence_dir)
    lang = language or ws.config.report.language
    # The report shows what the decision stands on: one record per check (decision.context).
    shown = [
        *standing(records, ws.config.options).values(),
        *[r for r in ev.current(records).values() if r.kind == "decision"],
    ]
    with speaking(lang):
        report = render.build(
            records,
            ws.root,
            SECTIONS,
            team=ws.config.team,
            decision=ws.config.decision,
            damaged=damaged,
            shown=shown,
            overview=decision_overview,
            signature=signature_of(ws),
            snapshot=snapshot,
        )
        return render.write(report, out_dir or ws.report_dir, pdf=pdf)
