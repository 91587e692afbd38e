"""Format detection and the audit on artifacts written by the real libraries (SPEC A2, E2, E5).

Everything is built here, on CPU, from tiny local configs (no hub download): a Hugging Face
Trainer run of a 2-layer GPT-2 (hidden size 32) with checkpoints, PEFT LoRA adapters, a
torch.distributed.checkpoint folder, weights-only and sharded safetensors, a GGUF file
from the `gguf` writer, torch files in the zip and legacy formats, the Lightning and
DeepSpeed checkpoint layouts (written with torch.save in the shape those libraries use),
and a pickle whose loading runs a command.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpudecide.artifacts import audit, formats, hashing

PINNED_REV = "607a30d783dfa663caf39e06633721c8d4cfcd7e"
_BUILT: dict[str, Path] = {}


class _Payload:
    """Unpickling this runs `os.system(command)`; pickling it runs nothing."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (os.system, (self.command,))


def _gpt2() -> Any:
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=64, n_positions=32)
    return GPT2LMHeadModel(cfg)


def _trainer(out: Path) -> None:
    import torch
    from tokenizers import Tokenizer, models
    from torch.utils.data import Dataset
    from transformers import Trainer, TrainingArguments

    torch.manual_seed(0)

    class Tiny(Dataset[dict[str, Any]]):
        def __len__(self) -> int:
            return 12

        def __getitem__(self, i: int) -> dict[str, Any]:
            ids = torch.randint(0, 64, (16,))
            return {"input_ids": ids, "labels": ids}

    args = TrainingArguments(
        output_dir=str(out),
        max_steps=3,
        save_steps=2,
        per_device_train_batch_size=4,
        report_to=[],
        logging_steps=1,
        use_cpu=True,
        seed=7,
        optim="adamw_torch",
        disable_tqdm=True,
    )
    Trainer(model=_gpt2(), args=args, train_dataset=Tiny()).train()
    vocab = {f"t{i}": i for i in range(63)} | {"[UNK]": 63}
    Tokenizer(models.WordLevel(vocab, unk_token="[UNK]")).save(str(out / "tokenizer.json"))


def _adapters(base: Path) -> None:
    from peft import LoraConfig, get_peft_model

    local_base = base / "base-model"
    _gpt2().save_pretrained(local_base)
    from transformers import GPT2LMHeadModel

    loaded = GPT2LMHeadModel.from_pretrained(local_base)  # name_or_path = the local folder
    cfg = LoraConfig(r=2, target_modules=["c_attn"], fan_in_fan_out=True)
    get_peft_model(loaded, cfg).save_pretrained(base / "adapter_local")
    for name, revision in (("adapter_pinned", PINNED_REV), ("adapter_branch", "main")):
        hub = _gpt2()
        hub.name_or_path = "openai-community/gpt2"
        cfg = LoraConfig(r=2, target_modules=["c_attn"], fan_in_fan_out=True)
        get_peft_model(hub, cfg, revision=revision).save_pretrained(base / name)


def _dcp(out: Path) -> None:
    import torch
    import torch.distributed.checkpoint as dcp

    model = _gpt2()
    opt = torch.optim.AdamW(model.parameters())
    ids = torch.randint(0, 64, (2, 8))
    model(ids, labels=ids).loss.backward()
    opt.step()
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "assuming the intent is to save in a single process"
        dcp.save(
            {"model": model.state_dict(), "optim": opt.state_dict(), "step": 3}, checkpoint_id=out
        )


def _weights(base: Path) -> None:
    import torch
    from safetensors.torch import save_file

    model = _gpt2()
    sd = {k: v.to(torch.bfloat16).contiguous() for k, v in model.state_dict().items()}
    sd.pop("lm_head.weight")  # tied to the embedding; safetensors refuses shared storage
    (base / "weights_only").mkdir()
    save_file(sd, str(base / "weights_only" / "model.safetensors"), metadata={"format": "pt"})
    model.config.save_pretrained(base / "weights_only")
    model.save_pretrained(base / "sharded", max_shard_size="60KB")


def _torch_layouts(base: Path) -> None:
    import torch

    model = _gpt2()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    ids = torch.randint(0, 64, (2, 8))
    model(ids, labels=ids).loss.backward()
    opt.step()
    lightning = base / "lightning"
    lightning.mkdir()
    # The dict Lightning's CheckpointConnector.dump_checkpoint writes, saved by torch.save.
    torch.save(
        {
            "epoch": 1,
            "global_step": 7,
            "pytorch-lightning_version": "2.4.0",
            "state_dict": model.state_dict(),
            "loops": {},
            "callbacks": {},
            "optimizer_states": [opt.state_dict()],
            "lr_schedulers": [],
        },
        lightning / "last.ckpt",
    )
    ds = base / "deepspeed" / "global_step5"
    ds.mkdir(parents=True)
    # DeepSpeed's file names; the model file holds `module`, the ZeRO file the optimizer.
    torch.save({"module": model.state_dict(), "global_steps": 5}, ds / "mp_rank_00_model_states.pt")
    torch.save(
        {"optimizer_state_dict": opt.state_dict(), "ds_version": "0.15.0"},
        ds / "bf16_zero_pp_rank_0_mp_rank_00_optim_states.pt",
    )
    (base / "deepspeed" / "latest").write_text("global_step5")
    legacy = base / "legacy"
    legacy.mkdir()
    torch.save(
        model.state_dict(), legacy / "pytorch_model.bin", _use_new_zipfile_serialization=False
    )


def _gguf(base: Path) -> None:
    import gguf
    import numpy as np

    (base / "gguf").mkdir()
    writer = gguf.GGUFWriter(str(base / "gguf" / "model-f16.gguf"), "gpt2")
    writer.add_name("tiny")
    writer.add_file_type(1)  # MOSTLY_F16
    writer.add_tensor("token_embd.weight", np.zeros((64, 32), dtype=np.float16))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def _evil(base: Path) -> Path:
    """An export whose pickles would each run `touch MARKER` when loaded."""
    import torch

    evil = base / "evil"
    evil.mkdir()
    marker = base / "evil-marker"
    cmd = f"touch {marker}"
    (evil / "pytorch_model.bin").write_bytes(pickle.dumps({"w": _Payload(cmd)}, protocol=2))
    torch.save({"model": _Payload(cmd)}, evil / "model.pt")
    return marker


def build(base: Path) -> dict[str, Path]:
    """Build every fixture once per test session (several modules share them)."""
    if _BUILT:
        return _BUILT
    _trainer(base / "trainer")
    _adapters(base)
    _dcp(base / "dcp")
    _weights(base)
    _torch_layouts(base)
    _gguf(base)
    marker = _evil(base)
    _BUILT.update({name: base / name for name in (
        "trainer", "adapter_local", "adapter_pinned", "adapter_branch", "dcp", "weights_only",
        "sharded", "lightning", "deepspeed", "legacy", "gguf", "evil",
    )})  # fmt: skip
    _BUILT["evil_marker"] = marker
    return _BUILT


@pytest.fixture(scope="session")
def arts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Paths of the artifacts built by the real libraries."""
    return build(tmp_path_factory.mktemp("artifacts"))


def detect(root: Path) -> formats.Detection:
    """Hash and detect a folder."""
    tree = hashing.hash_tree(root)
    return formats.detect(root, [(f.path, f.size) for f in tree.files])


def ids(result: audit.AuditResult) -> list[str]:
    """Hazard ids of an audit."""
    return [h["id"] for h in result.figures["hazards"]]


def layer(result: audit.AuditResult, name: str) -> dict[str, dict[str, Any]]:
    """Items of one E2 layer by name."""
    return {i["name"]: i for i in result.figures["layers"][name]}


# ---- Trainer checkpoints ----------------------------------------------------------------


def test_trainer_checkpoint_is_resumable_with_every_training_item(arts: dict[str, Path]) -> None:
    result = audit.run(arts["trainer"])
    f = result.figures
    assert f["resumable"] is True
    assert f["resumable_from"] == {"path": "checkpoint-3", "step": 3, "epoch": 1.0}
    assert f["formats"]["checkpoint-3"]["format"] == "hf_trainer_checkpoint"
    assert f["formats"]["checkpoint-3/model.safetensors"]["format"] == "safetensors"
    assert f["formats"]["checkpoint-3/optimizer.pt"]["format"] == "torch_zip"
    assert f["formats"]["checkpoint-3/optimizer.pt"]["details"]["optimizer_family"] == "adam"
    rng = f["formats"]["checkpoint-3/rng_state.pth"]["details"]["rng_keys"]
    assert {"python", "numpy", "cpu"} <= set(rng)
    args = f["formats"]["checkpoint-3/training_args.bin"]["details"]
    assert args["seed"] == 7 and args["optim"] == "adamw_torch"
    training = layer(result, "training")
    assert training["optimizer_state"]["path"] == "checkpoint-3/optimizer.pt"
    assert training["scheduler"]["path"] == "checkpoint-3/scheduler.pt"
    assert training["random_seeds"]["status"] == "found"
    assert training["exact_config"]["path"].endswith("training_args.bin")
    assert training["step_epoch"]["path"] == "checkpoint-3/trainer_state.json"
    assert training["grad_scaler"]["status"] == "not_applicable"  # fp32 run, no loss scaler
    assert layer(result, "data")["intermediate_checkpoints"]["status"] == "found"
    # Nothing says which container, driver, dataset or commit produced it (E2).
    execution, provenance = layer(result, "execution"), layer(result, "provenance")
    assert execution["container_digest"]["status"] == "missing"
    assert execution["library_versions"]["status"] == "found"  # config.json transformers_version
    assert provenance["dataset_snapshot"]["status"] == "missing"
    assert ids(result) == []
    assert result.record.verdict == "warn"
    # training_args.bin constructs transformers classes: listed, not flagged as dangerous.
    assert any("TrainingArguments" in n for n in result.figures["notes"])


def test_trainer_pickles_are_allowlisted(arts: dict[str, Path]) -> None:
    det = detect(arts["trainer"] / "checkpoint-3")
    for name in ("optimizer.pt", "rng_state.pth", "scheduler.pt"):
        imports = det.files[name].details["pickle"]["imports"]
        assert all(i["level"] == "safe" for i in imports), (name, imports)
    args = det.files["training_args.bin"].details["pickle"]["imports"]
    assert {i["level"] for i in args} <= {"safe", "library"}


def test_optimizer_removed_turns_the_export_weights_only(
    arts: dict[str, Path], tmp_path: Path
) -> None:
    import shutil

    export = tmp_path / "export"
    shutil.copytree(arts["trainer"] / "checkpoint-3", export)
    (export / "optimizer.pt").unlink()
    result = audit.run(export)
    assert result.figures["resumable"] is False
    hazards = [h for h in result.figures["hazards"] if h["id"] == "weights_without_optimizer_state"]
    assert hazards and hazards[0]["path"] == "model.safetensors"
    assert layer(result, "training")["optimizer_state"]["status"] == "missing"
    assert result.stop


# ---- PEFT adapters ------------------------------------------------------------------------


def test_adapter_with_local_base_and_no_revision_is_a_hazard(arts: dict[str, Path]) -> None:
    result = audit.run(arts["adapter_local"])
    f = result.figures
    assert f["formats"]["."]["format"] == "peft_adapter"
    assert f["formats"]["adapter_model.safetensors"]["format"] == "safetensors"
    hazard = next(h for h in f["hazards"] if h["id"] == "adapter_base_revision_missing")
    assert hazard["path"] == "adapter_config.json"
    assert "local path" in hazard["detail"] and "revision: null" in hazard["detail"]
    assert "weights_without_optimizer_state" in ids(result)


def test_adapter_on_a_branch_name_is_a_hazard(arts: dict[str, Path]) -> None:
    result = audit.run(arts["adapter_branch"])
    hazard = next(
        h for h in result.figures["hazards"] if h["id"] == "adapter_base_revision_missing"
    )
    assert "'main' is not a 40-hex commit" in hazard["detail"]


def test_pinned_adapter_passes_when_the_plan_wants_weights_only(
    arts: dict[str, Path], tmp_path: Path
) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text("resumable_required: false\n")
    result = audit.run(arts["adapter_pinned"], plan_path=plan)
    assert ids(result) == []
    provenance = layer(result, "provenance")
    assert provenance["base_model_revision"]["path"] == "adapter_config.json"
    assert provenance["base_model_id"]["detail"] == "openai-community/gpt2"
    assert layer(result, "training")["optimizer_state"]["status"] == "not_applicable"


# ---- torch.distributed.checkpoint, Lightning, DeepSpeed, legacy --------------------------------


def test_dcp_folder_is_resumable_from_its_metadata(arts: dict[str, Path]) -> None:
    det = detect(arts["dcp"])
    assert det.dirs["."]["format"] == "torch_dcp"
    unit = next(u for u in det.units if u.kind == "torch_dcp")
    assert unit.resumable and unit.step_stored and unit.step is None
    assert unit.optimizer_state == "__0_0.distcp"
    meta = det.files[".metadata"].details["pickle"]
    assert meta["dangerous"] == []
    data = det.files["__0_0.distcp"].details
    assert data["container"] == "distcp" and data["pickle"]["pickles"] > 0
    assert data["pickle"]["dangerous"] == []


def test_lightning_ckpt_step_and_optimizer_read_from_opcodes(arts: dict[str, Path]) -> None:
    det = detect(arts["lightning"])
    report = det.files["last.ckpt"]
    assert report.format == "lightning_ckpt"
    assert report.details["lightning_version"] == "2.4.0"
    assert report.details["optimizer_family"] == "sgd"
    unit = det.units[0]
    assert (unit.kind, unit.step, unit.epoch, unit.resumable) == ("lightning_ckpt", 7, 1.0, True)


def test_deepspeed_layout(arts: dict[str, Path]) -> None:
    det = detect(arts["deepspeed"])
    assert det.dirs["global_step5"]["format"] == "deepspeed"
    unit = det.units[0]
    assert unit.kind == "deepspeed" and unit.step == 5 and unit.resumable
    assert unit.optimizer_state == "global_step5/bf16_zero_pp_rank_0_mp_rank_00_optim_states.pt"
    assert det.files["latest"].details["tag"] == "global_step5"


def test_legacy_torch_file(arts: dict[str, Path]) -> None:
    det = detect(arts["legacy"])
    report = det.files["pytorch_model.bin"]
    assert report.format == "torch_legacy"
    assert report.details["pickle"]["pickles"] == 5
    assert report.details["pickle"]["dangerous"] == [] and report.findings == []
    assert "weights" in report.roles


# ---- weights-only, sharded, GGUF ------------------------------------------------------------


def test_weights_only_safetensors_precision_and_hazard(arts: dict[str, Path]) -> None:
    result = audit.run(arts["weights_only"])
    details = result.figures["formats"]["model.safetensors"]["details"]
    assert details["precision"] == "bf16" and details["problems"] == []
    assert set(details["dtypes"]) == {"BF16"}
    assert result.figures["resumable"] is False
    assert ids(result) == ["weights_without_optimizer_state"]


def test_sharded_safetensors_index_checked(arts: dict[str, Path], tmp_path: Path) -> None:
    import shutil

    det = detect(arts["sharded"])
    index = det.files["model.safetensors.index.json"]
    shards = index.details["shards"]
    assert len(shards) >= 2 and det.findings == []
    export = tmp_path / "sharded"
    shutil.copytree(arts["sharded"], export)
    (export / shards[-1]).unlink()
    broken = detect(export)
    assert [f.id for f in broken.findings] == ["corrupt_file"]
    assert shards[-1] in broken.findings[0].detail


def test_gguf_header(arts: dict[str, Path]) -> None:
    det = detect(arts["gguf"])
    report = det.files["model-f16.gguf"]
    assert report.format == "gguf" and report.findings == []
    assert report.details["metadata"]["general.architecture"] == "gpt2"
    assert report.details["precision"] == "fp16" and report.details["tensor_count"] == 1


# ---- dangerous pickles: flagged, never run --------------------------------------------------


def test_dangerous_pickle_is_flagged_and_never_run(arts: dict[str, Path], tmp_path: Path) -> None:
    marker = arts["evil_marker"]
    result = audit.run(arts["evil"])
    flagged = {
        h["path"]: h["detail"] for h in result.figures["hazards"] if h["id"] == "dangerous_pickle"
    }
    assert set(flagged) == {"pytorch_model.bin", "model.pt"}
    assert all("system" in d for d in flagged.values())
    assert result.model.model_dump(mode="json") == json.loads(json.dumps(result.figures))
    assert result.stop and result.record.verdict == "fail"
    assert not marker.exists()
    # The fixture is real: loading the same bytes does run the command.
    probe = tmp_path / "probe"
    control = tmp_path / "control.pkl"
    control.write_bytes(pickle.dumps(_Payload(f"touch {probe}"), protocol=2))
    code = f"import pickle; pickle.load(open({str(control)!r}, 'rb'))"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)
    assert probe.exists()
    assert not marker.exists()


def test_corrupt_files_are_findings_not_crashes(arts: dict[str, Path], tmp_path: Path) -> None:
    export = tmp_path / "broken"
    export.mkdir()
    good = (arts["trainer"] / "checkpoint-3" / "model.safetensors").read_bytes()
    (export / "model.safetensors").write_bytes(good[: len(good) // 2])  # truncated
    opt = (arts["trainer"] / "checkpoint-3" / "optimizer.pt").read_bytes()
    (export / "optimizer.pt").write_bytes(opt[: len(opt) - 200])  # zip directory cut off
    (export / "trainer_state.json").write_text('{"global_step": 3,')
    (export / "vendor.pkg").write_bytes(b"\x07VNDR\x00\x01" + bytes(range(256)) * 4)
    result = audit.run(export)
    found = {(h["id"], h["path"]) for h in result.figures["hazards"]}
    assert ("corrupt_file", "model.safetensors") in found
    assert ("corrupt_file", "optimizer.pt") in found
    assert ("corrupt_file", "trainer_state.json") in found
    assert ("unknown_format", "vendor.pkg") in found
    json.dumps(result.figures)  # the whole result stays serialisable
    # Findings of every kind dump from the typed figures as written (record hashes unchanged).
    assert result.model.model_dump(mode="json") == json.loads(json.dumps(result.figures))
