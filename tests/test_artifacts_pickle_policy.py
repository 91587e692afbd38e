"""The import policy: the allow list is torch's weights-only list (read from the installed
torch), the deny list names code execution, everything else is untrusted (SPEC A7)."""

from __future__ import annotations

import pytest

from gpudecide.artifacts.pickle_policy import classify


def test_every_weights_only_global_of_installed_torch_is_safe() -> None:
    from torch import _weights_only_unpickler as wo

    allowed = sorted(wo._get_allowed_globals())
    assert len(allowed) > 100
    unsafe = [g for g in allowed if classify(*g.rsplit(".", 1))[0] != "safe"]
    assert unsafe == []


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("os", "system"),
        ("posix", "system"),
        ("builtins", "eval"),
        ("builtins", "getattr"),
        ("subprocess", "Popen"),
        ("runpy", "_run_code"),
        ("code", "InteractiveInterpreter.runcode"),
        ("operator", "attrgetter"),
        ("uuid", "_get_command_stdout"),
        ("torch.serialization", "load"),
    ],
)
def test_deny_list(module: str, name: str) -> None:
    level, reason = classify(module, name)
    assert level == "dangerous" and reason.startswith("deny list")


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("torch.nn.modules.linear", "Linear"),
        ("torch.nn.modules.container", "ParameterDict"),
        ("builtins", "len"),
        ("builtins", "type"),
        ("ast", "parse"),
        ("mypkg.io", "Load"),
    ],
)
def test_outside_the_allow_list_is_untrusted_not_denied(module: str, name: str) -> None:
    level, reason = classify(module, name)
    assert level == "untrusted" and "weights-only" in reason


def test_boundaries_between_levels() -> None:
    assert classify("uuid", "UUID")[0] == "safe"  # the class is data; the helpers are not
    assert classify("collections", "OrderedDict")[0] == "safe"
    assert classify("collections", "namedtuple")[0] == "untrusted"
    assert classify("transformers.training_args", "TrainingArguments")[0] == "library"
    assert classify("transformers.utils", "load_file")[0] == "untrusted"  # not a class
    assert classify("torch", "FloatStorage")[0] == "safe"
    assert classify("torch", "load")[0] == "dangerous"
