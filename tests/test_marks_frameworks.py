"""The callbacks in real training runs on CPU: a Hugging Face Trainer training a 2-layer
GPT-2 built from a config (nothing downloaded), with TensorBoard logging and checkpoints, and
a PyTorch Lightning run with ModelCheckpoint; their marks, event files and checkpoint folders
read back and joined to a job log that names the job."""

from __future__ import annotations

import socket
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from gpudecide.jobs.load import load_logs
from gpudecide.marks.apply import mark_jobs
from gpudecide.marks.read import read_marks


def _job_log(path: Path, job_id: str, start: datetime, end: datetime) -> Path:
    """A CSV job log with the job, the node it ran on, and its times."""
    path.write_text(
        "job_id,state,gpu_count,start,end,node\n"
        f"{job_id},completed,1,{start.isoformat()},{end.isoformat()},{socket.gethostname()}\n"
    )
    return path


def _hf_train(out: Path, marks: Path) -> None:
    import torch
    from torch.utils.data import Dataset
    from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

    from gpudecide.marks.hf import MarksCallback

    torch.manual_seed(0)

    class Tiny(Dataset[dict[str, Any]]):
        def __len__(self) -> int:
            return 16

        def __getitem__(self, i: int) -> dict[str, Any]:
            ids = torch.randint(0, 64, (16,))
            return {"input_ids": ids, "labels": ids}

    args = TrainingArguments(
        output_dir=str(out),
        max_steps=4,
        save_steps=2,
        per_device_train_batch_size=4,
        report_to=["tensorboard"],
        logging_steps=2,
        use_cpu=True,
        seed=7,
        disable_tqdm=True,
    )
    model = GPT2LMHeadModel(
        GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=64, n_positions=32)
    )
    Trainer(model=model, args=args, train_dataset=Tiny(), callbacks=[MarksCallback(marks)]).train()


def test_hugging_face_trainer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPUDECIDE_MARKS_DIR", raising=False)
    monkeypatch.setenv("SLURM_JOB_ID", "9001")
    monkeypatch.setenv("SLURM_RESTART_COUNT", "0")
    marks, outputs = tmp_path / "marks", tmp_path / "outputs"
    before = datetime.now(UTC)
    _hf_train(outputs / "exp-a", marks)
    after = datetime.now(UTC)

    found = read_marks([marks, outputs])
    assert found.problems == []
    by_source = {r.source: r for r in found.runs}
    assert set(by_source) == {"marks", "hf-checkpoints", "tensorboard"}
    ours = by_source["marks"]
    assert ours.identity.slurm_job_id == "9001" and ours.identity.slurm_restart_count == 0
    kinds = [(m.kind, m.step) for m in ours.marks]
    assert kinds == [
        ("prep_start", None),
        ("first_step", 1),
        ("checkpoint", 2),
        ("checkpoint", 4),
        ("end", None),
    ]
    assert ours.marks[-1].status == "completed"
    assert Path(ours.marks[3].path or "") == outputs / "exp-a" / "checkpoint-4"
    # the checkpoint folders' own times agree with the callback's marks
    folders = by_source["hf-checkpoints"]
    assert [m.step for m in folders.marks] == [2, 4]
    for mark, folder_mark in zip(ours.marks[2:4], folders.marks, strict=True):
        assert abs((mark.at - folder_mark.at).total_seconds()) < 1
    # TensorBoard's first scalar comes after the first step (logged every 2 steps)
    tb = by_source["tensorboard"].first("first_step")
    first = ours.first("first_step")
    assert tb is not None and first is not None and tb.step == 2 and tb.at >= first.at

    log = load_logs(
        [
            _job_log(
                tmp_path / "jobs.csv",
                "9001",
                before - timedelta(seconds=5),
                after + timedelta(seconds=5),
            )
        ]
    ).attempts
    marked = mark_jobs(log, [marks, outputs])
    report = marked.report
    # the marks by their job id; TensorBoard by the host in its file name and the time;
    # the checkpoint folders carry neither
    assert {j.run.source: (j.outcome, j.by) for j in report.joins} == {
        "marks": ("matched", "job_id"),
        "tensorboard": ("matched", "host_time"),
        "hf-checkpoints": ("unmatched", None),
    }
    row = marked.attempts.to_pylist()[0]
    assert row["prep_start"] == ours.marks[0].at
    assert row["first_step"] == first.at  # the exact mark, earlier than TensorBoard's
    assert row["last_checkpoint"] == ours.marks[3].at
    assert before <= row["prep_start"] < row["first_step"] < row["last_checkpoint"] <= after

    # an output folder named after the job joins the checkpoint folders and TensorBoard too
    (outputs / "exp-a").rename(outputs / "9001")
    report = mark_jobs(log, [outputs]).report
    assert {j.run.source: (j.outcome, j.by) for j in report.joins} == {
        "tensorboard": ("matched", "folder"),
        "hf-checkpoints": ("matched", "folder"),
    }
    assert report.fields["last_checkpoint"].filled == 1


@pytest.mark.filterwarnings("ignore:The `srun` command is available")
@pytest.mark.filterwarnings("ignore:`isinstance\\(treespec, LeafSpec\\)` is deprecated")
def test_lightning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import lightning.pytorch as L
    import torch
    from lightning.pytorch.callbacks import ModelCheckpoint
    from torch.utils.data import DataLoader, TensorDataset

    from gpudecide.marks.lightning import MarksCallback

    monkeypatch.setenv("GPUDECIDE_JOB_ID", "lt-42")

    class Tiny(L.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(4, 1)

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            x, y = batch
            return torch.nn.functional.mse_loss(self.layer(x), y)

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    torch.manual_seed(0)
    data = DataLoader(TensorDataset(torch.randn(32, 4), torch.randn(32, 1)), batch_size=4)
    marks, ckpts = tmp_path / "marks", tmp_path / "ckpt"
    before = datetime.now(UTC)
    trainer = L.Trainer(
        max_steps=4,
        accelerator="cpu",
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=str(tmp_path),
        callbacks=[
            MarksCallback(marks),
            ModelCheckpoint(dirpath=ckpts, every_n_train_steps=2, save_top_k=-1),
        ],
    )
    trainer.fit(Tiny(), data)
    after = datetime.now(UTC)

    found = read_marks([marks])
    assert found.problems == []
    (run,) = found.runs
    assert run.identity.job_id == "lt-42"
    assert [(m.kind, m.step) for m in run.marks] == [
        ("prep_start", None),
        ("first_step", 1),
        ("checkpoint", 2),
        ("checkpoint", 4),
        ("end", None),
    ]
    assert run.marks[-1].status == "completed"
    for mark in run.marks[2:4]:
        path = Path(mark.path or "")
        assert path.parent == ckpts and path.suffix == ".ckpt"
        # the mark carries the time the file was written
        assert mark.at == datetime.fromtimestamp(path.stat().st_mtime_ns / 1e9, UTC)

    log = load_logs(
        [
            _job_log(
                tmp_path / "jobs.csv",
                "lt-42",
                before - timedelta(seconds=5),
                after + timedelta(seconds=5),
            )
        ]
    ).attempts
    row = mark_jobs(log, [marks]).attempts.to_pylist()[0]
    assert row["first_step"] == run.marks[1].at
    assert row["last_checkpoint"] == run.marks[3].at
