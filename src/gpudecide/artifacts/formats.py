"""Format detection from file names and headers only; no artifact is ever executed (SPEC A2, A7).

Per file: a format (what the bytes are), roles (what the file is for: weights, optimizer
state, scheduler, RNG state, training config, ...), details read from headers, and findings
(corrupt file, dangerous pickle, unknown format). Per folder: checkpoint units (a Hugging Face
Trainer `checkpoint-N`, a PEFT adapter, a torch.distributed.checkpoint folder, a DeepSpeed
`global_stepN`, a Lightning `.ckpt`, plain weights), each with the files that hold its
weights, optimizer state and step, which decides whether it is resumable (A2).

Recognised: safetensors (single and sharded with `model.safetensors.index.json`), Hugging
Face Trainer checkpoints, PEFT adapters, DCP folders (`.metadata` + `__R_N.distcp`),
Lightning `.ckpt`, torch `.pt`/`.bin`/`.pth` (zip or legacy), GGUF, DeepSpeed folders
(`global_stepN/`, `latest`), numpy `.npy`/`.npz` (object arrays' pickles scanned), plus the
JSON/YAML/text files around them. Detection goes from strong headers, to containers opened
and scanned member by member by content (zip even with a damaged central directory, tar,
gzip/bz2/xz/zlib; 7z and the like are `archive_not_scanned`), to a pickle parse that
recognises a pickle whatever its name (joblib, dill, scikit-learn `.sav`, `.pth.tar`), to
names. Anything else with no known header is an `unknown_format` finding: it is what a
vendor-SDK-only package looks like.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from gpudecide import jsonio
from gpudecide.artifacts import archives, gguf, numpy_files
from gpudecide.artifacts import safetensors_header as st
from gpudecide.artifacts.pickle_scan import PickleReport
from gpudecide.artifacts.torch_files import (
    TorchInfo,
    from_archive,
    inspect_distcp,
    inspect_pickle_file,
    is_pickle_head,
)
from gpudecide.artifacts.words import as_written
from gpudecide.errors import InputError
from gpudecide.inputs import parse_yaml, read_input_text
from gpudecide.message import Message, english, message, nmessage

__all__ = [
    "JSON_LIMIT",
    "TEXT_SNIFF",
    "Detection",
    "FileReport",
    "Finding",
    "Unit",
    "detect",
    "inspect_file",
    "roles_by_name",
]

JSON_LIMIT = 64 << 20
TEXT_SNIFF = 8192

_CHECKPOINT_DIR = re.compile(r"^checkpoint-(\d+)$")
_DS_STEP_DIR = re.compile(r"^global_step(\d+)$")
_DISTCP = re.compile(r"^__\d+_\d+\.distcp$")
_SHARD = re.compile(r"^(model|pytorch_model|adapter_model)-\d+-of-\d+\.(safetensors|bin)$")
_RNG = re.compile(r"^rng_state(_\d+)?\.pth$")
_OPT_STATES = re.compile(r"optim_states\.pt$")
_MODEL_STATES = re.compile(r"model_states\.pt$")

_WEIGHT_NAMES = {
    "model.safetensors",
    "pytorch_model.bin",
    "adapter_model.safetensors",
    "adapter_model.bin",
    "diffusion_pytorch_model.safetensors",
    "diffusion_pytorch_model.bin",
    "tf_model.h5",
    "flax_model.msgpack",
    "model.onnx",
}
_TOKENIZER_NAMES = {
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.json",
    "vocab.txt",
    "merges.txt",
    "tokenizer.model",
    "spiece.model",
    "sentencepiece.bpe.model",
    "chat_template.jinja",
    "chat_template.json",
}
_METRIC_NAMES = {
    "eval_results.json",
    "all_results.json",
    "train_results.json",
    "test_results.json",
    "metrics.json",
    "results.json",
}
_TRAIN_CONFIG_NAMES = {
    "training_args.json",
    "training_config.json",
    "training_config.yaml",
    "train_config.yaml",
    "hparams.yaml",
    "trainer_config.json",
    "finetune_config.yaml",
    "ds_config.json",
    "fsdp_config.json",
    "accelerate_config.yaml",
}
_OPEN_BY_EXTENSION = {
    ".onnx": "onnx",
    ".msgpack": "flax_msgpack",
    ".parquet": "parquet",
    ".arrow": "arrow",
    ".tiktoken": "tiktoken",
    ".jinja": "text",
}
_TEXT_EXTENSIONS = {".md", ".txt", ".py", ".sh", ".cfg", ".ini", ".toml", ".csv", ".tsv", ".log"}
_HDF5 = b"\x89HDF\r\n\x1a\n"
# Formats that are pickles underneath: torch, joblib, dill, scikit-learn's .sav, legacy .tar.
_PICKLE_EXTS = {
    ".pt", ".pth", ".bin", ".ckpt", ".pkl", ".pickle", ".joblib", ".dill", ".sav", ".p",
    ".tar", ".pck", ".pkl3",
}  # fmt: skip

_ADAM_KEYS = {"exp_avg", "exp_avg_sq"}
_OPT_MARKERS = ("exp_avg", "momentum_buffer", "param_groups", "optimizer_states")
_STEP_KEY = re.compile(r"(^|\.)(global_step|step|epoch|iteration|iter_num)$")
_WEIGHT_KEY = re.compile(r"(^|\.)(weight|bias)$")
_RNG_KEYS = ("python", "numpy", "cpu", "cuda", "mps", "xla", "npu", "hpu")


@dataclass
class Finding:
    """A problem with one file; `id` is the audit's hazard id, `why` what is wrong (a
    message: the scanners' own diagnostics inside it are shown as written)."""

    id: str
    path: str
    why: Message

    @property
    def detail(self) -> str:
        """What is wrong, in English (the record keeps it beside the message)."""
        return english(self.why)


@dataclass
class FileReport:
    """What one file is."""

    path: str
    size: int
    format: str
    roles: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    pickle: PickleReport | None = None

    def as_dict(self) -> dict[str, Any]:
        """Machine form (the audit's `formats[path]`)."""
        return {
            "kind": "file",
            "format": self.format,
            "roles": list(self.roles),
            "size": self.size,
            "details": self.details,
            "findings": [f.detail for f in self.findings],
        }


@dataclass
class Unit:
    """One checkpoint or weights set, and what it allows (A2)."""

    path: str
    kind: str
    weights: str | None = None
    optimizer_state: str | None = None
    scheduler: str | None = None
    rng_state: str | None = None
    grad_scaler: str | None = None
    step: int | None = None
    epoch: float | None = None
    step_stored: bool = False
    step_source: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def resumable(self) -> bool:
        """Model AND optimizer state AND step/epoch (SPEC A2)."""
        has_step = self.step is not None or self.epoch is not None or self.step_stored
        return bool(self.weights and self.optimizer_state and has_step)

    def as_dict(self) -> dict[str, Any]:
        """Machine form."""
        return {
            "path": self.path,
            "kind": self.kind,
            "resumable": self.resumable,
            "weights": self.weights,
            "optimizer_state": self.optimizer_state,
            "scheduler": self.scheduler,
            "rng_state": self.rng_state,
            "grad_scaler": self.grad_scaler,
            "step": self.step,
            "epoch": self.epoch,
            "step_stored": self.step_stored,
            "step_source": self.step_source,
            "notes": list(self.notes),
        }


@dataclass
class Detection:
    """Everything detected in an export."""

    files: dict[str, FileReport]
    dirs: dict[str, dict[str, Any]]
    units: list[Unit]

    @property
    def findings(self) -> list[Finding]:
        """All file findings, in path order."""
        return [f for path in sorted(self.files) for f in self.files[path].findings]

    def with_role(self, role: str) -> list[FileReport]:
        """Files holding a role, in path order."""
        return [self.files[p] for p in sorted(self.files) if role in self.files[p].roles]

    def formats(self) -> dict[str, dict[str, Any]]:
        """Per path (folders and files): what was detected."""
        out: dict[str, dict[str, Any]] = {}
        for path in sorted(self.dirs):
            out[path] = self.dirs[path]
        for path in sorted(self.files):
            out[path] = self.files[path].as_dict()
        return out

    @property
    def resumable(self) -> bool:
        """At least one unit allows continuing training."""
        return any(u.resumable for u in self.units)


def _ext(name: str) -> str:
    return PurePosixPath(name).suffix.lower()


def _read_head(path: Path, n: int = 64) -> bytes:
    with open(path, "rb") as handle:
        return handle.read(n)


def _is_text(path: Path) -> bool:
    with open(path, "rb") as handle:
        sample = handle.read(TEXT_SNIFF)
    if b"\x00" in sample:
        return False
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut at the end of the sample is still text.
        return exc.start >= len(sample) - 3
    return True


def roles_by_name(rel: str) -> list[str]:
    """What a file is for, from its name alone (weights, optimizer state, tokenizer, ...)."""
    name = PurePosixPath(rel).name
    lower = name.lower()
    parent = PurePosixPath(rel).parent.name
    roles: list[str] = []
    if lower in _WEIGHT_NAMES or _SHARD.match(lower) or _MODEL_STATES.search(lower):
        roles.append("weights")
    if lower.startswith("adapter_model."):
        roles.append("adapter")
    if lower in ("optimizer.pt", "optimizer.bin") or _OPT_STATES.search(lower):
        roles.append("optimizer_state")
    if lower in ("scheduler.pt", "lr_scheduler.pt"):
        roles.append("scheduler")
    if lower == "scaler.pt":
        roles.append("grad_scaler")
    if _RNG.match(lower):
        roles.append("rng_state")
    if lower == "trainer_state.json":
        roles.append("trainer_state")
    if lower in ("training_args.bin",) or lower in _TRAIN_CONFIG_NAMES:
        roles.append("training_config")
    if lower in ("config.json", "generation_config.json"):
        roles.append("model_config")
    if lower == "adapter_config.json":
        roles.append("adapter_config")
    if lower.endswith(".index.json"):
        roles.append("weights_index")
    if lower in _TOKENIZER_NAMES or lower.endswith(".tiktoken"):
        roles.append("tokenizer")
    if lower in _METRIC_NAMES or lower.startswith("events.out.tfevents"):
        roles.append("metrics")
    if name == ".metadata":
        roles.append("dcp_metadata")
    if _DISTCP.match(name):
        roles.append("dcp_data")
    if name == "latest" and not parent.startswith("global_step"):
        roles.append("deepspeed_latest")
    return roles


def _json_file(path: Path, report: FileReport) -> Any:
    if report.size > JSON_LIMIT:
        report.details["note"] = "larger than 64 MiB: not parsed"
        return None
    try:
        return jsonio.read_json(path, JSON_LIMIT)
    except InputError as exc:
        why = message("artifacts", "not valid JSON: {error}", error=as_written(exc.message[:120]))
        report.findings.append(Finding("corrupt_file", report.path, why))
        return None


def _looks_like_manifest(data: Any) -> bool:
    return isinstance(data, dict) and "run_id" in data and ("base_model" in data or "files" in data)


def _json_details(rel: str, data: Any, report: FileReport) -> None:
    name = PurePosixPath(rel).name.lower()
    if not isinstance(data, dict):
        return
    if _looks_like_manifest(data):
        report.roles.append("run_manifest")
        report.details["run_id"] = data.get("run_id")
    if name == "trainer_state.json":
        report.details.update(
            {
                "global_step": data.get("global_step"),
                "epoch": data.get("epoch"),
                "max_steps": data.get("max_steps"),
                "best_metric": data.get("best_metric"),
            }
        )
        history = data.get("log_history")
        if isinstance(history, list):
            evals = sorted(
                {k for h in history if isinstance(h, dict) for k in h if k.startswith("eval_")}
            )
            report.details["eval_metrics"] = evals
            if evals:
                report.roles.append("metrics")
    elif name == "adapter_config.json":
        report.details.update(
            {
                "base_model_name_or_path": data.get("base_model_name_or_path"),
                "revision": data.get("revision"),
                "peft_type": data.get("peft_type"),
                "peft_version": data.get("peft_version"),
            }
        )
    elif name == "config.json":
        report.details.update(
            {
                "model_type": data.get("model_type"),
                "architectures": data.get("architectures"),
                "dtype": data.get("dtype", data.get("torch_dtype")),
                "transformers_version": data.get("transformers_version"),
                "name_or_path": data.get("_name_or_path"),
            }
        )
    elif name.endswith(".index.json"):
        weight_map = data.get("weight_map")
        if not isinstance(weight_map, dict):
            why = message("artifacts", "index without a weight_map")
            report.findings.append(Finding("corrupt_file", rel, why))
        else:
            report.details["shards"] = sorted({str(v) for v in weight_map.values()})
            report.details["tensors"] = len(weight_map)
            meta = data.get("metadata")
            if isinstance(meta, dict):
                report.details["total_size"] = meta.get("total_size")


def _pickle_roles(info: TorchInfo, report: FileReport) -> None:
    """Roles and step read from a pickle's constants (opcode-level, nothing evaluated)."""
    p = info.pickle
    strings = set(p.strings)
    imports = {g.dotted for g in p.globals}
    has_tensors = any(name.startswith("torch._utils._rebuild") for name in imports)
    is_optimizer = "param_groups" in strings and bool(
        strings & (_ADAM_KEYS | {"momentum_buffer", "state"})
    )
    if (is_optimizer or "optimizer_states" in strings) and "optimizer_state" not in report.roles:
        report.roles.append("optimizer_state")
    if "optimizer_state" in report.roles:
        if strings >= _ADAM_KEYS or "betas" in strings:
            report.details["optimizer_family"] = "adam"
        elif "momentum_buffer" in strings or "nesterov" in strings:
            report.details["optimizer_family"] = "sgd"
        lr = p.value_after("lr")
        if isinstance(lr, float):
            report.details["lr"] = lr
    weighty = strings & {"state_dict", "model", "model_state_dict", "module"} or any(
        _WEIGHT_KEY.search(s) for s in strings
    )
    if has_tensors and weighty and "weights" not in report.roles:
        report.roles.append("weights")
    if "pytorch-lightning_version" in strings or "lightning_version" in strings:
        report.format = "lightning_ckpt"
        for key in ("pytorch-lightning_version", "lightning_version"):
            if isinstance(p.value_after(key), str):
                report.details["lightning_version"] = p.value_after(key)
        if "lr_schedulers" in strings and "scheduler" not in report.roles:
            report.roles.append("scheduler")
    for key in ("global_step", "step", "epoch", "iteration"):
        value = p.value_after(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            report.details.setdefault(key, value)
    if "rng_state" in report.roles:
        report.details["rng_keys"] = [k for k in _RNG_KEYS if k in strings]
    if any(g.name == "TrainingArguments" for g in p.globals):
        for key in ("seed", "optim", "learning_rate", "num_train_epochs", "max_steps", "bf16"):
            value = p.value_after(key)
            if value is not None:
                report.details[key] = value


def _names(lines: list[str], cap: int = 40) -> Message:
    """The first `cap` of a scanner's lines (names, offsets: as written), and how many more."""
    shown = "; ".join(lines[:cap])
    if len(lines) <= cap:
        return as_written(shown)
    return message("artifacts", "{names}; and {n} more", names=shown, n=len(lines) - cap)


def _problems(problems: list[str]) -> Message:
    """A scanner's first three problems, as it wrote them."""
    return as_written("; ".join(problems[:3]))


def _pickle_findings(info: TorchInfo, report: FileReport) -> None:
    """Hazards of a scanned pickle: deny list, outside the allow list, frames, size."""
    p = info.pickle
    path = report.path
    if p.denied:
        why = message("artifacts", "code execution on load: {names}", names=_names(p.denied))
        report.findings.append(Finding("dangerous_pickle", path, why))
    if p.untrusted:
        why = message(
            "artifacts",
            "loading needs trust in code outside the weights-only allow list: {names}",
            names=_names(p.untrusted),
        )
        report.findings.append(Finding("untrusted_pickle_import", path, why))
    if p.frame_issues:
        why = message(
            "artifacts",
            "frame and opcode boundaries disagree, so scanners and the unpickler read "
            "different programs: {issues}",
            issues=_names(p.frame_issues, 5),
        )
        report.findings.append(Finding("pickle_frame_mismatch", path, why))
    if p.too_large:
        why = message("artifacts", "not scanned: too large ({reason})", reason=p.too_large)
        report.findings.append(Finding("pickle_not_scanned_too_large", path, why))
    problems = info.problems + p.problems
    if problems and info.container != "distcp":
        report.findings.append(Finding("corrupt_file", path, _problems(problems)))
    elif p.problems and info.container == "distcp":
        report.findings.append(Finding("corrupt_file", path, _problems(p.problems)))
    if p.library:
        report.details["library_classes"] = p.library


def inspect_file(root: Path, rel: str, size: int) -> FileReport:
    """Detect one file's format and roles, and what is wrong with it."""
    path = root / rel
    name = PurePosixPath(rel).name
    ext = _ext(name)
    report = FileReport(rel, size, "unknown", roles=roles_by_name(rel))
    try:
        _inspect(path, rel, name, ext, report)
    except OSError as exc:
        why = message("artifacts", "cannot be read: {reason}", reason=str(exc.strerror or exc))
        report.findings.append(Finding("corrupt_file", rel, why))
    except NotImplementedError as exc:
        # zipfile refuses members it cannot decode (a "version needed" it does not know, a
        # compression it lacks): what cannot be read cannot be cleared, so it is named.
        why = message("artifacts", "not scanned: {reason}", reason=str(exc))
        report.findings.append(Finding("archive_not_scanned", rel, why))
    return report


def _torch(path: Path, report: FileReport, info: TorchInfo) -> None:
    report.pickle = info.pickle
    report.details.update(info.summary())
    if not {"dcp_metadata", "dcp_data"} & set(report.roles):
        _pickle_roles(info, report)
    _pickle_findings(info, report)


def _inspect(path: Path, rel: str, name: str, ext: str, report: FileReport) -> None:
    """Strong headers first, then containers, then a pickle parse, then names."""
    head = _read_head(path, 512) if report.size else b""
    for step in (_by_header, _by_container, _by_pickle, _by_name):
        if step(path, rel, ext, head, report):
            return
    magic: str | Message = head[:8].hex() or message("artifacts", "nothing")
    why = message(
        "artifacts",
        "no open format explains it (starts with {magic}): a package only its vendor's SDK "
        "may read",
        magic=magic,
    )
    report.findings.append(Finding("unknown_format", rel, why))


def _by_header(path: Path, rel: str, ext: str, head: bytes, report: FileReport) -> bool:
    if ext == ".safetensors" or st.looks_like_safetensors(head, report.size):
        report.format = "safetensors"
        sinfo = st.inspect_file(path)
        report.details.update(sinfo.summary())
        if not sinfo.ok:
            report.findings.append(Finding("corrupt_file", rel, _problems(sinfo.problems)))
        elif "weights" not in report.roles:
            report.roles.append("weights")
        return True
    if head.startswith(b"GGUF") or ext == ".gguf":
        report.format = "gguf"
        ginfo = gguf.inspect_file(path)
        report.details.update(ginfo.summary())
        if ginfo.problems:
            report.findings.append(Finding("corrupt_file", rel, _problems(ginfo.problems)))
        else:
            report.roles.append("weights")
        return True
    if "dcp_data" in report.roles:
        report.format = "dcp_data"
        _torch(path, report, inspect_distcp(path))
        return True
    if "dcp_metadata" in report.roles:
        report.format = "dcp_metadata"
        _torch(path, report, inspect_pickle_file(path))
        return True
    if head.startswith(_HDF5):
        report.format = "hdf5"
        return True
    return False


def _by_container(path: Path, rel: str, ext: str, head: bytes, report: FileReport) -> bool:
    """Zip, .npy, tar and compressed streams are opened; 7z and the like are hazards."""
    if head.startswith(b"PK\x03\x04") or (head.startswith(b"PK") and ext in (".pt", ".ckpt")):
        _zip(path, rel, ext, report)
        return True
    if head.startswith(numpy_files.MAGIC):
        _npy(path, report)
        return True
    closed = archives.unopenable(head)
    if closed:
        report.format = closed.split()[0].lower()
        why = message(
            "artifacts",
            "{kind} cannot be opened here: what it holds is not scanned, and a pickle inside "
            "would run on load",
            kind=message("artifacts", closed),
        )
        report.findings.append(Finding("archive_not_scanned", rel, why))
        return True
    kind = archives.compression(head)
    if kind is None and archives.is_tar(head):
        kind = "tar"
    if kind is None:
        return False
    arc = archives.inspect_tar(path) if kind == "tar" else archives.inspect_compressed(path, kind)
    if not arc.pickle_members and not arc.damage and kind == "zlib":
        return False  # 0x78 followed by a valid check byte can begin other files too
    report.format = kind
    _archive_findings(path, arc, report)
    return True


def _archive_findings(path: Path, arc: archives.ArchiveInfo, report: FileReport) -> None:
    report.details.update(arc.summary())
    if arc.pickle_members:
        _torch(path, report, from_archive(arc))
    elif arc.damage:
        report.findings.append(Finding("corrupt_file", report.path, _problems(arc.damage)))
    if arc.not_scanned:
        why = nmessage(
            "artifacts",
            "{n} member not scanned: {members}",
            "{n} members not scanned: {members}",
            n=len(arc.not_scanned),
            members="; ".join(arc.not_scanned[:5]),
        )
        report.findings.append(Finding("archive_not_scanned", report.path, why))


def _npy(path: Path, report: FileReport) -> None:
    report.format = "numpy"
    npy = numpy_files.inspect_file(path)
    report.details.update(npy.summary())
    if npy.pickle is not None:
        _torch(path, report, TorchInfo("pickle", pickle=npy.pickle))
    elif npy.problems:
        why = as_written("; ".join(npy.problems))
        report.findings.append(Finding("corrupt_file", report.path, why))


def _by_pickle(path: Path, rel: str, ext: str, head: bytes, report: FileReport) -> bool:
    """A pickle is recognised by parsing it, whatever its name (joblib, dill, .sav, ...)."""
    if not head:
        return False
    named = ext in _PICKLE_EXTS
    info = inspect_pickle_file(path)
    p = info.pickle
    if not (p.pickles or p.hostile_anywhere() or is_pickle_head(head)):
        if not named:
            return False
        if p.opcodes <= 1:
            why = message(
                "artifacts",
                "{ext} file that is neither a torch zip nor a pickle (starts with {magic})",
                ext=ext,
                magic=head[:8].hex(),
            )
            report.findings.append(Finding("unknown_format", rel, why))
            return True
    report.format = "torch_legacy" if info.container == "legacy" else "pickle"
    if ext == ".ckpt":
        report.format = "lightning_ckpt"
    _torch(path, report, info)
    return True


def _by_name(path: Path, rel: str, ext: str, head: bytes, report: FileReport) -> bool:
    name = PurePosixPath(rel).name
    if ext == ".json":
        report.format = "json"
        data = _json_file(path, report)
        if data is not None:
            _json_details(rel, data, report)
        return True
    if ext in (".yaml", ".yml"):
        _yaml(path, report)
        return True
    if name.lower() in ("tokenizer.model", "spiece.model", "sentencepiece.bpe.model"):
        report.format = "sentencepiece"
    elif name.startswith("events.out.tfevents"):
        report.format = "tensorboard_events"
    elif ext in _OPEN_BY_EXTENSION:
        report.format = _OPEN_BY_EXTENSION[ext]
    elif report.size == 0:
        report.format = "empty"
    elif ext in _TEXT_EXTENSIONS or _is_text(path):
        report.format = "text"
        if "deepspeed_latest" in report.roles:
            tag = path.read_text(encoding="utf-8", errors="replace").strip()[:200]
            report.details["tag"] = tag
    else:
        return False
    return True


def _yaml(path: Path, report: FileReport) -> None:
    report.format = "yaml"
    try:
        text = read_input_text(path, JSON_LIMIT) if report.size <= JSON_LIMIT else None
        data = parse_yaml(text, path)[0] if text is not None else None
    except InputError as exc:
        why = message("artifacts", "not valid YAML: {error}", error=as_written(exc.message))
        report.findings.append(Finding("corrupt_file", report.path, why))
        return
    if isinstance(data, dict) and _looks_like_manifest(data):
        report.roles.append("run_manifest")
        report.details["run_id"] = data.get("run_id")


def _zip(path: Path, rel: str, ext: str, report: FileReport) -> None:
    """A zip is scanned member by member, by content; its kind comes from its members."""
    arc = archives.inspect_zip(path)
    names = arc.members
    if any(n.endswith("data.pkl") for n in names):
        report.format = "lightning_ckpt" if ext == ".ckpt" else "torch_zip"
        _archive_findings(path, arc, report)
        return
    if names and all(n.endswith(".npy") for n in names):
        report.format = "numpy_npz"
        _archive_findings(path, arc, report)
        return
    report.format = "zip"
    _archive_findings(path, arc, report)
    if not arc.pickle_members and not arc.damage and not arc.not_scanned:
        why = nmessage(
            "artifacts",
            "zip archive of {n} member in no known model format",
            "zip archive of {n} members in no known model format",
            n=len(names),
        )
        report.findings.append(Finding("unknown_format", rel, why))


# ---- folders and units ------------------------------------------------------------------


def _parent(rel: str) -> str:
    parent = str(PurePosixPath(rel).parent)
    return "" if parent == "." else parent


def _join(d: str, name: str) -> str:
    return f"{d}/{name}" if d else name


def _first(files: dict[str, FileReport], d: str, names: list[str]) -> str | None:
    for n in names:
        if _join(d, n) in files:
            return _join(d, n)
    return None


def _weights_in(files: dict[str, FileReport], d: str) -> str | None:
    found = _first(
        files,
        d,
        [
            "model.safetensors.index.json",
            "model.safetensors",
            "adapter_model.safetensors",
            "pytorch_model.bin.index.json",
            "pytorch_model.bin",
            "adapter_model.bin",
        ],
    )
    if found:
        return found
    for p in sorted(files):
        if _parent(p) == d and "weights" in files[p].roles:
            return p
    return None


def _sub_ds(files: dict[str, FileReport], d: str) -> tuple[str | None, str | None, str | None]:
    """Weights and optimizer files of a DeepSpeed `global_stepN` folder under `d`."""
    weights = optim = step_dir = None
    for p in sorted(files):
        parent = PurePosixPath(_parent(p))
        if _parent(str(parent)) != d and not (d == "" and str(parent.parent) == "."):
            continue
        if not _DS_STEP_DIR.match(parent.name):
            continue
        step_dir = str(parent)
        roles = files[p].roles
        if "weights" in roles and weights is None:
            weights = p
        if "optimizer_state" in roles and optim is None:
            optim = p
    return weights, optim, step_dir


def _check_index(files: dict[str, FileReport], rel: str) -> None:
    """Every shard named by a sharded-weights index is in the export."""
    report = files[rel]
    d = _parent(rel)
    for shard in report.details.get("shards") or []:
        if _join(d, shard) not in files:
            why = message(
                "artifacts", "names shard {shard!r}, which is not in the export", shard=shard
            )
            report.findings.append(Finding("corrupt_file", rel, why))


def _check_index_tensors(root: Path, files: dict[str, FileReport], rel: str) -> None:
    report = files[rel]
    if not rel.endswith("safetensors.index.json") or report.findings:
        return
    try:
        data = jsonio.read_json(root / rel, JSON_LIMIT)
    except (OSError, InputError):
        return
    weight_map = data.get("weight_map") if isinstance(data, dict) else None
    if not isinstance(weight_map, dict):
        return
    d = _parent(rel)
    names_by_shard: dict[str, set[str]] = {}
    for tensor, shard in weight_map.items():
        names_by_shard.setdefault(str(shard), set()).add(str(tensor))
    total = 0
    for shard, wanted in sorted(names_by_shard.items()):
        key = _join(d, shard)
        if key not in files:
            continue  # reported by _check_index
        try:
            info = st.inspect_file(root / key)
        except OSError:
            continue
        have = {t.name for t in info.tensors}
        total += sum(t.end - t.begin for t in info.tensors)
        lost = sorted(wanted - have)
        if info.ok and lost:
            why = nmessage(
                "artifacts",
                "{n} tensor mapped to {shard} is not in it (e.g. {first!r})",
                "{n} tensors mapped to {shard} are not in it (e.g. {first!r})",
                n=len(lost),
                shard=shard,
                first=lost[0],
            )
            report.findings.append(Finding("corrupt_file", rel, why))
    declared = report.details.get("total_size")
    if isinstance(declared, int) and total and declared != total:
        report.details["total_size_note"] = (
            f"index says {declared} bytes, shards hold {total} bytes of tensors"
        )


def detect(root: Path, paths: list[tuple[str, int]]) -> Detection:
    """Inspect every file, then group them into checkpoint units."""
    files = {rel: inspect_file(root, rel, size) for rel, size in paths}
    for rel, report in files.items():
        if "weights_index" in report.roles:
            _check_index(files, rel)
            _check_index_tensors(root, files, rel)
    dirs: dict[str, dict[str, Any]] = {}
    units: list[Unit] = []
    claimed: set[str] = set()
    all_dirs = sorted({_parent(p) for p in files} | {""}, key=lambda d: (d.count("/"), d))
    by_dir: dict[str, set[str]] = {}
    for p in files:
        by_dir.setdefault(_parent(p), set()).add(PurePosixPath(p).name)
    for d in all_dirs:
        names = by_dir.get(d, set())
        base = PurePosixPath(d).name
        is_trainer = (
            "trainer_state.json" in names
            or bool(names & {"optimizer.pt", "optimizer.bin", "scheduler.pt"})
            or (_CHECKPOINT_DIR.match(base) is not None and _weights_in(files, d) is not None)
        )
        if is_trainer:
            units.append(_trainer_unit(files, d, names, base))
            dirs[d or "."] = {"kind": "folder", "format": "hf_trainer_checkpoint"}
            claimed.add(d)
        if "adapter_config.json" in names:
            dirs.setdefault(d or ".", {"kind": "folder", "format": "peft_adapter"})
            if not is_trainer:
                units.append(
                    Unit(
                        d or ".",
                        "peft_adapter",
                        weights=_first(
                            files, d, ["adapter_model.safetensors", "adapter_model.bin"]
                        ),
                    )
                )
                claimed.add(d)
        if ".metadata" in names and any(_DISTCP.match(n) for n in names):
            units.append(_dcp_unit(files, d))
            dirs[d or "."] = {"kind": "folder", "format": "torch_dcp"}
            claimed.add(d)
        m = _DS_STEP_DIR.match(base)
        if m and any(_MODEL_STATES.search(n) or _OPT_STATES.search(n) for n in names):
            dirs[d] = {"kind": "folder", "format": "deepspeed"}
            if _parent(d) not in claimed:
                units.append(_deepspeed_unit(files, d, int(m.group(1))))
            claimed.add(d)
        if "latest" in names and d not in claimed:
            dirs.setdefault(d or ".", {"kind": "folder", "format": "deepspeed"})
    # Files that are checkpoints on their own, and weights outside any checkpoint folder.
    for rel in sorted(files):
        report = files[rel]
        d = _parent(rel)
        if d in claimed or (_parent(d) in claimed and _DS_STEP_DIR.match(PurePosixPath(d).name)):
            continue
        if report.format in ("lightning_ckpt", "torch_zip", "torch_legacy", "pickle") and (
            "optimizer_state" in report.roles and "weights" in report.roles
        ):
            units.append(_file_unit(report))
        elif "weights" in report.roles and not _SHARD.match(PurePosixPath(rel).name):
            if "weights_index" in report.roles:
                continue
            units.append(Unit(rel, "weights", weights=rel))
        elif "weights_index" in report.roles and rel.endswith(".index.json"):
            units.append(Unit(rel, "weights", weights=rel, notes=["sharded weights"]))
    return Detection(files, dirs, units)


def _trainer_unit(files: dict[str, FileReport], d: str, names: set[str], base: str) -> Unit:
    unit = Unit(d or ".", "hf_trainer_checkpoint", weights=_weights_in(files, d))
    unit.optimizer_state = _first(files, d, ["optimizer.pt", "optimizer.bin"])
    unit.scheduler = _first(files, d, ["scheduler.pt", "lr_scheduler.pt"])
    unit.grad_scaler = _first(files, d, ["scaler.pt"])
    rng = sorted(n for n in names if _RNG.match(n))
    unit.rng_state = _join(d, rng[0]) if rng else None
    ds_weights, ds_optim, ds_dir = _sub_ds(files, d)
    if ds_dir:
        unit.notes.append(f"DeepSpeed state in {ds_dir}")
        unit.weights = unit.weights or ds_weights
        unit.optimizer_state = unit.optimizer_state or ds_optim
    if "adapter_config.json" in names:
        unit.notes.append("PEFT adapter: resuming also needs the exact base model")
    state = files.get(_join(d, "trainer_state.json"))
    if state is not None and isinstance(state.details.get("global_step"), int):
        unit.step = state.details["global_step"]
        epoch = state.details.get("epoch")
        unit.epoch = float(epoch) if isinstance(epoch, int | float) else None
        unit.step_source = state.path
    else:
        m = _CHECKPOINT_DIR.match(base)
        if m:
            unit.notes.append("step taken from the folder name only: no trainer_state.json")
    return unit


def _dcp_unit(files: dict[str, FileReport], d: str) -> Unit:
    meta = files[_join(d, ".metadata")]
    unit = Unit(d or ".", "torch_dcp")
    keys = list(dict.fromkeys(meta.pickle.strings)) if meta.pickle else []
    optim = [k for k in keys if any(m in k for m in ("exp_avg", "momentum_buffer", "param_groups"))]
    weights = [k for k in keys if _WEIGHT_KEY.search(k) and k not in optim]
    steps = [
        k for k in keys if _STEP_KEY.search(k) and not re.search(r"(optim|optimizer)\.state\.", k)
    ]
    data_files = sorted(
        p for p in files if _parent(p) == d and _DISTCP.match(PurePosixPath(p).name)
    )
    if weights:
        unit.weights = data_files[0] if data_files else meta.path
    if optim:
        unit.optimizer_state = data_files[0] if data_files else meta.path
    if steps:
        unit.step_stored = True
        unit.step_source = f"{meta.path} (key {steps[0]!r}; its value is in the data files)"
    unit.notes.append(
        f"state_dict keys read from {meta.path}: {len(weights)} weight, {len(optim)} optimizer"
    )
    return unit


def _deepspeed_unit(files: dict[str, FileReport], d: str, step: int) -> Unit:
    unit = Unit(d, "deepspeed", step=step, step_source=f"{d} (folder name)")
    for p in sorted(files):
        if _parent(p) != d:
            continue
        if "weights" in files[p].roles and unit.weights is None:
            unit.weights = p
        if "optimizer_state" in files[p].roles and unit.optimizer_state is None:
            unit.optimizer_state = p
    return unit


def _file_unit(report: FileReport) -> Unit:
    kind = "lightning_ckpt" if report.format == "lightning_ckpt" else "torch_checkpoint"
    unit = Unit(report.path, kind, weights=report.path, optimizer_state=report.path)
    step = report.details.get("global_step", report.details.get("step"))
    if isinstance(step, int):
        unit.step = step
        unit.step_source = f"{report.path} (pickled key, read from its opcodes)"
    epoch = report.details.get("epoch")
    if isinstance(epoch, int | float):
        unit.epoch = float(epoch)
        unit.step_source = unit.step_source or f"{report.path} (pickled key 'epoch')"
    if "scheduler" in report.roles:
        unit.scheduler = report.path
    return unit
