"""The demo's export audit: what a managed vendor handed back after run 7 (fictional).

The vendor exported a LoRA adapter whose config names its base model without a revision,
the adapter weights (bf16 safetensors, written here byte by byte in the format's layout),
the trainer state, and a `vendor_state.vpk` only its SDK reads; no optimizer state. The
team's retention.yaml answers two of the five A8 questions. The audit finds three stop
factors (E5) and writes its evidence into the demo workspace, so the report shows them.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

from gpudecide import evidence as ev
from gpudecide import workspace
from gpudecide.artifacts import audit
from gpudecide.fsutil import atomic_write_bytes, atomic_write_text

EXPORT = "exports/vendor-run-7"


def _safetensors(tensors: dict[str, tuple[str, list[int]]]) -> bytes:
    """A valid safetensors file of zero-filled tensors (dtype, shape) per name."""
    sizes = {"BF16": 2, "F32": 4}
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, (dtype, shape) in tensors.items():
        n = sizes[dtype]
        for d in shape:
            n *= d
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + n]}
        offset += n
    blob = json.dumps(header, separators=(",", ":")).encode()
    blob += b" " * (-len(blob) % 8)  # the reference writer pads the header to 8 bytes
    return struct.pack("<Q", len(blob)) + blob + bytes(offset)


def write_export(root: Path) -> Path:
    """Write the vendor's export under `root/exports/vendor-run-7`."""
    export = root / EXPORT
    adapter = {
        "peft_type": "LORA",
        "base_model_name_or_path": "kaz-llm/kazllm-8b-instruct",
        "revision": None,
        "r": 16,
        "lora_alpha": 32,
        "target_modules": ["q_proj", "v_proj"],
        "task_type": "CAUSAL_LM",
    }
    atomic_write_text(export / "adapter_config.json", json.dumps(adapter, indent=2) + "\n")
    layers = {
        f"base_model.model.layers.{i}.self_attn.{p}_proj.lora_{ab}.weight": (
            "BF16",
            [16, 64] if ab == "A" else [64, 16],
        )
        for i in range(2)
        for p in ("q", "v")
        for ab in ("A", "B")
    }
    atomic_write_bytes(export / "adapter_model.safetensors", _safetensors(layers))
    state = {
        "global_step": 1800,
        "epoch": 3.0,
        "log_history": [{"step": 1800, "eval_loss": 1.21, "epoch": 3.0}],
    }
    atomic_write_text(export / "trainer_state.json", json.dumps(state, indent=2) + "\n")
    atomic_write_bytes(
        export / "vendor_state.vpk", b"VPK\x02" + bytes((i * 37) % 251 for i in range(4096))
    )
    atomic_write_text(
        export / "README.md", "Exported by the vendor's console, run 7. Load with vendor-sdk.\n"
    )
    return export


RETENTION_ANSWERS = {
    "retention_owner": "Head of ML platform; approved by the CISO (policy ML-RET-2)",
    "key_access": "Bank HSM admins only; the vendor never sees the key (contract 4.2)",
}


def run(ws: workspace.Workspace) -> Path:
    """Write the export, answer two A8 questions, audit it, write the evidence record."""
    export = write_export(ws.root)
    policy = ws.root / "retention.yaml"
    text = policy.read_text(encoding="utf-8")
    for key, answer in RETENTION_ANSWERS.items():
        text = text.replace(f"  {key}: null", f"  {key}: {json.dumps(answer)}")
    atomic_write_text(policy, text)
    result = audit.run(export, workspace_root=ws.root)
    return ev.write(result.record, ws.evidence_dir)
