"""The portability trainer for real on CPU: resume equals the uninterrupted run, checkpoints are
atomic and verified before loading (SPEC A2, E3, E4)."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from gpudecide.errors import InputError
from gpudecide.portability import checkpoint as ck
from gpudecide.portability.trainer import (
    CheckpointError,
    TrainConfig,
    latest_checkpoint,
    read_checkpoint,
    require_device,
    train,
)

CFG = TrainConfig(size="tiny", steps=12, checkpoint_steps=[6], n_sequences=64)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    root = tmp_path_factory.mktemp("runs")
    ref = train(CFG, root / "ref")
    half = train(CFG, root / "half", stop_at=6)
    return {"root": root, "ref": ref, "half": half}


def test_resume_continues_the_very_same_run(runs: dict[str, object], tmp_path: Path) -> None:
    ref, half = runs["ref"], runs["half"]
    ckpt = half.checkpoints[-1].path  # type: ignore[attr-defined]
    assert ckpt.name == "checkpoint-6"
    rest = train(CFG, tmp_path / "rest", resume_from=ckpt)
    assert (rest.start_step, rest.final_step) == (6, 12)
    assert [m["step"] for m in rest.metrics] == list(range(7, 13))
    # Same CPU build, same threads: restored RNG + optimizer give identical losses.
    assert [m["loss"] for m in rest.metrics] == [m["loss"] for m in ref.metrics[6:]]  # type: ignore[attr-defined]
    assert rest.final_metrics() == ref.final_metrics()  # type: ignore[attr-defined]
    assert ref.metrics[-1]["loss"] < ref.metrics[0]["loss"]  # type: ignore[attr-defined]
    lines = (tmp_path / "rest" / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(x)["step"] for x in lines] == list(range(7, 13))


def test_checkpoint_holds_every_layer(runs: dict[str, object]) -> None:
    ckpt = runs["half"].checkpoints[-1]  # type: ignore[attr-defined]
    names = {f.path for f in ckpt.files}
    assert names == {
        "model.safetensors", "optimizer.pt", "scheduler.pt", "rng_state.pth",
        "trainer_state.json", "training_config.json", "environment.json", "SHA256SUMS",
    }  # fmt: skip
    weights = load_file(str(ckpt.path / "model.safetensors"))  # the reference reader agrees
    assert weights["tok.weight"].shape == (256, 64)
    state = read_checkpoint(ckpt.path)
    assert state.step == 6 and state.config["seed"] == CFG.seed
    assert set(state.rng or {}) >= {"python", "numpy", "cpu"}
    assert state.environment["torch"] == torch.__version__
    assert len(state.environment["packages_sha256"]) == 64
    assert state.missing_for_resume == []
    assert latest_checkpoint(ckpt.path.parent) == ckpt.path


def _copy(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst)
    return dst


def test_tampered_file_fails_before_loading(runs: dict[str, object], tmp_path: Path) -> None:
    ckpt = _copy(runs["half"].checkpoints[-1].path, tmp_path / "checkpoint-6")  # type: ignore[attr-defined]
    # A pickle that would run code if it were ever unpickled: the hash check must stop it first.
    evil = pickle.dumps(eval)
    (ckpt / "optimizer.pt").write_bytes(evil)
    with pytest.raises(CheckpointError) as info:
        train(CFG, tmp_path / "out", resume_from=ckpt)
    assert info.value.reason == "hash_mismatch"
    assert info.value.path is not None and info.value.path.endswith("optimizer.pt")
    assert not (tmp_path / "out").exists()


def test_unlisted_and_missing_files(runs: dict[str, object], tmp_path: Path) -> None:
    ckpt = _copy(runs["half"].checkpoints[-1].path, tmp_path / "a")  # type: ignore[attr-defined]
    (ckpt / "extra.bin").write_bytes(b"x")
    with pytest.raises(CheckpointError) as info:
        ck.verify_checkpoint(ckpt)
    assert info.value.reason == "unlisted_file"
    ckpt2 = _copy(runs["half"].checkpoints[-1].path, tmp_path / "b")  # type: ignore[attr-defined]
    (ckpt2 / "rng_state.pth").unlink()
    with pytest.raises(CheckpointError) as info:
        ck.verify_checkpoint(ckpt2)
    assert info.value.reason == "missing_file"


def test_optimizer_state_missing_cannot_continue(runs: dict[str, object], tmp_path: Path) -> None:
    src = runs["half"].checkpoints[-1].path  # type: ignore[attr-defined]
    ckpt = tmp_path / "checkpoint-6"
    ckpt.mkdir()
    kept = [n for n in ck.REQUIRED] + [ck.SCHEDULER, ck.RNG]
    for name in kept:
        (ckpt / name).write_bytes((src / name).read_bytes())
    lines = [ln for ln in (src / ck.SUMS).read_text().splitlines() if ln.split()[-1] in kept]
    (ckpt / ck.SUMS).write_text("\n".join(lines) + "\n")
    with pytest.raises(CheckpointError) as info:
        train(CFG, tmp_path / "out", resume_from=ckpt)
    assert info.value.reason == "optimizer_state_missing"
    assert "cannot continue from the expected step 6" in info.value.message
    assert "optimizer.pt" in info.value.message


def test_config_mismatch_refused(runs: dict[str, object], tmp_path: Path) -> None:
    ckpt = runs["half"].checkpoints[-1].path  # type: ignore[attr-defined]
    other = CFG.model_copy(update={"lr": 1e-3})
    with pytest.raises(CheckpointError) as info:
        train(other, tmp_path / "out", resume_from=ckpt)
    assert info.value.reason == "config_mismatch" and "lr" in info.value.message
    # steps may differ: a resume can run longer than the original plan
    longer = CFG.model_copy(update={"steps": 13})
    assert train(longer, tmp_path / "ok", resume_from=ckpt).final_step == 13


def test_interrupted_write_leaves_no_checkpoint(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), ck.CheckpointWriter(tmp_path, 3) as w:
        w.json(ck.TRAINER_STATE, {"global_step": 3})
        raise RuntimeError("killed mid-write")
    assert list(tmp_path.iterdir()) == []
    assert latest_checkpoint(tmp_path) is None


def test_streamed_safetensors_matches_reference(tmp_path: Path) -> None:
    from safetensors.torch import save_file

    tensors = {
        "a": torch.randn(3, 5),
        "b": torch.arange(7, dtype=torch.int64),
        "c": torch.randn(4).to(torch.bfloat16),
        "d": torch.tensor(2.5),
        "e": torch.tensor([True, False]),
    }
    digest = ck.write_safetensors(tensors, tmp_path / "x.safetensors", {"format": "pt"})
    back = load_file(str(tmp_path / "x.safetensors"))
    for k, v in tensors.items():
        assert torch.equal(back[k], v)
    from gpudecide.fsutil import sha256_path

    assert sha256_path(tmp_path / "x.safetensors") == (digest.sha256, digest.size)
    save_file(tensors, str(tmp_path / "ref.safetensors"))
    assert load_file(str(tmp_path / "ref.safetensors")).keys() == back.keys()


def test_cuda_absent_is_bad_input() -> None:
    if torch.cuda.is_available():
        assert require_device("cuda").type == "cuda"
        return
    with pytest.raises(InputError) as info:
        train(CFG.model_copy(update={"device": "cuda"}), Path("/nonexistent/never-written"))
    assert info.value.field == "device" and "CUDA" in info.value.message
