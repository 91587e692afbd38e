"""`gpudecide option add`: one more option in an existing workspace, written into every
file that names options (`gpudecide.scaffold`), so its id is typed once."""

from __future__ import annotations

from typing import Annotated

import typer

from gpudecide.console import JsonOpt, WorkspaceOpt, emit_json, guard, open_workspace, out
from gpudecide.i18n import translator

__all__ = [
    "add",
    "option_app",
    "register",
]

_ = translator("report")

option_app = typer.Typer(
    help="The options a workspace compares: add one to every file that names options.",
    no_args_is_help=True,
)


@option_app.command("add")
def add(
    option_id: Annotated[str, typer.Argument(metavar="ID", help="The new option's id.")],
    kind: Annotated[
        str, typer.Option("--kind", help="owned | rented | managed (a hybrid is added by hand).")
    ],
    workspace_dir: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Add an option: its entry in gpudecide.yaml and costs.yaml, its isolation answers and
    its RACI rows, each from the template's example of its kind."""
    with guard(as_json):
        from gpudecide import workspace
        from gpudecide.scaffold import add_option, parse_option

        ws = open_workspace(workspace_dir, required=True)
        assert ws is not None
        spec = parse_option(f"{option_id}:{kind}")
        added = add_option(ws.root, spec, workspace.template_files())
        workspace.load(ws.root)  # the workspace still reads: the new entry is valid
    if as_json:
        emit_json(
            {
                "option": spec.id,
                "kind": spec.kind,
                "changed": [str(p) for p in added.changed],
                "todo": added.todo,
            }
        )
        return
    out.print(_("option {id} ({kind}) added").format(id=spec.id, kind=spec.kind), markup=False)
    for path in added.changed:
        out.print(f"  {path}", markup=False)
    for rel in added.todo:
        out.print(
            _(
                "{file}: no row names an option of this kind yet: add {id} to the rows that apply"
            ).format(file=rel, id=spec.id),
            markup=False,
        )
    out.print(_("next: fill in its placeholders (search for {id})").format(id=spec.id))


def register(app: typer.Typer) -> None:
    """Add the `option` group to the app."""
    app.add_typer(option_app, name="option")
