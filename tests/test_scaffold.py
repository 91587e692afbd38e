"""Options named once (issue 27): `init --option ID:KIND` writes every template file for the
team's ids, `option add` adds one to an existing workspace, and bad names are exit 2 with
one line naming --option."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from gpudecide import workspace
from gpudecide.scaffold import EXAMPLES
from tests.conftest import run_cli

EXAMPLE_IDS = set(EXAMPLES.values())


def _content(path: Path) -> str:
    """The file without its comments (the examples may stay named in the explanations)."""
    return "\n".join(
        line for line in path.read_text().splitlines() if not line.lstrip().startswith("#")
    )


def _ids_in(root: Path) -> set[str]:
    found: set[str] = set()
    for path in root.glob("*.yaml"):
        found |= {i for i in EXAMPLE_IDS if re.search(rf"\b{re.escape(i)}\b", _content(path))}
    return found


def test_init_writes_every_file_for_the_team_s_options(tmp_path: Path) -> None:
    """The rare-runs team: one managed vendor, two rented pools, no owned servers."""
    root = tmp_path / "ws"
    run = run_cli(
        "init",
        str(root),
        "--option",
        "kz-cloud:managed",
        "--option",
        "rent-a:rented",
        "--option",
        "rent-b:rented",
    )
    assert run.returncode == 0, run.stderr
    for path in root.glob("*.yaml"):
        yaml.safe_load(path.read_text())  # every file is still YAML
    assert _ids_in(root) == set()  # no example id is left to retype
    ws = workspace.load(root)
    assert [(o.id, o.kind) for o in ws.config.options] == [
        ("rent-a", "rented"),
        ("rent-b", "rented"),
        ("kz-cloud", "managed"),
    ]
    costs = yaml.safe_load((root / "costs.yaml").read_text())
    assert [o["id"] for o in costs["rented"]] == ["rent-a", "rent-b"]
    assert costs["owned"] == [] and costs["hybrid"] == []
    assert [o["id"] for o in costs["managed"]] == ["kz-cloud"]
    raci = yaml.safe_load((root / "raci.yaml").read_text())
    lists = [a["options"] for act in raci["activities"] for a in act.get("assignments") or []]
    assert ["rent-a", "rent-b"] in lists and ["kz-cloud"] in lists
    # The export test and the drills name a dedicated pool of the team's (owned -> rented).
    assert yaml.safe_load((root / "export-test.yaml").read_text())["option"] == "rent-a"
    assert yaml.safe_load((root / "drills.yaml").read_text())["option"] == "rent-a"
    # The comments that explain each key are kept.
    assert "# The options being compared" in (root / "gpudecide.yaml").read_text()
    for check in ("raci", "isolation", "residency", "standard-path"):
        assert run_cli("check", check, cwd=root).returncode in (0, 1), check


def test_a_hybrid_takes_the_team_s_own_contours(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    args = ["--option", "dc:owned", "--option", "cloud:managed", "--option", "mix:hybrid"]
    assert run_cli("init", str(root), *args).returncode == 0
    ws = workspace.load(root)
    hybrid = next(o for o in ws.config.options if o.kind == "hybrid")
    assert hybrid.id == "mix" and hybrid.contours == ["dc", "cloud"]
    costs = yaml.safe_load((root / "costs.yaml").read_text())
    mix = costs["hybrid"][0]
    assert (mix["id"], mix["base"], mix["overflow"]) == ("mix", "dc", "cloud")
    assert costs["rented"] == []  # no rented pool named: the example is gone


def test_init_without_options_writes_the_templates_as_they_are(tmp_path: Path) -> None:
    """Twin: no --option, the worked examples stay (the demo and the docs use them)."""
    root = tmp_path / "ws"
    assert run_cli("init", str(root)).returncode == 0
    files = workspace.template_files()
    for rel, text in files.items():
        assert (root / rel).read_text() == text, rel
    assert _ids_in(root) == EXAMPLE_IDS


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--option", "kz-cloud"], "'kz-cloud' is not ID:KIND"),
        (["--option", "kz-cloud:vendor"], "'vendor' is not an option kind"),
        (["--option", "-x:owned"], "'-x' is not an option id"),
        (["--option", "a:owned", "--option", "a:managed"], "option 'a' is named twice"),
        (["--option", "h:hybrid", "--option", "a:owned"], "a hybrid option needs a dedicated"),
    ],
)
def test_a_bad_option_is_one_line_naming_the_flag(
    tmp_path: Path, args: list[str], said: str
) -> None:
    root = tmp_path / "ws"
    run = run_cli("init", str(root), *args)
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and "'--option'" in run.stderr and said in run.stderr
    assert not root.exists()  # nothing half-written


def test_option_add_writes_the_new_option_everywhere_its_kind_is_named(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    assert (
        run_cli("init", str(root), "--option", "c:managed", "--option", "r1:rented").returncode == 0
    )
    run = run_cli("option", "add", "r2", "--kind", "rented", "--json", cwd=root)
    assert run.returncode == 0, run.stderr
    body = json.loads(run.stdout)
    assert body["option"] == "r2" and body["todo"] == []
    assert {Path(p).name for p in body["changed"]} == {"gpudecide.yaml", "costs.yaml", "raci.yaml"}
    ws = workspace.load(root)
    assert [o.id for o in ws.config.options] == ["r1", "c", "r2"]
    raci = yaml.safe_load((root / "raci.yaml").read_text())
    lists = [a["options"] for act in raci["activities"] for a in act.get("assignments") or []]
    assert ["r1", "r2"] in lists
    # An owned option: no RACI row names an owned option yet, and the command says so.
    run = run_cli("option", "add", "dc", "--kind", "owned", cwd=root)
    assert run.returncode == 0, run.stderr
    assert "raci.yaml: no row names an option of this kind yet: add dc" in run.stdout
    isolation = yaml.safe_load((root / "isolation.yaml").read_text())
    assert [o["option"] for o in isolation["options"]] == ["c", "dc"]
    assert "# The options being compared" in (root / "gpudecide.yaml").read_text()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["r1", "--kind", "rented"], "option 'r1' is declared already"),
        (["h", "--kind", "hybrid"], "a hybrid is added by hand"),
        (["x", "--kind", "cloud"], "'cloud' is not an option kind"),
    ],
)
def test_option_add_refuses_what_it_cannot_add(tmp_path: Path, args: list[str], said: str) -> None:
    root = tmp_path / "ws"
    assert (
        run_cli("init", str(root), "--option", "r1:rented", "--option", "c:managed").returncode == 0
    )
    before = {p.name: p.read_bytes() for p in root.glob("*.yaml")}
    run = run_cli("option", "add", *args, cwd=root)
    assert run.returncode == 2 and said in run.stderr and run.stderr.count("\n") == 1
    assert {p.name: p.read_bytes() for p in root.glob("*.yaml")} == before
