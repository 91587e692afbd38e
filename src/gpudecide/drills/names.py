"""The drills by name, with the SPEC ids each covers (light: no torch to import)."""

from __future__ import annotations

__all__ = [
    "DRILLS",
    "MARKS_FOLDER",
    "NODE_LOCAL",
    "SPEC_IDS",
]

DRILLS = ("node-loss", "disk-full", "storage-revoked", "gpu-delay", "checkpoint-corrupt")
NODE_LOCAL = "node"  # --storage node: checkpoints only on the node's own disk
MARKS_FOLDER = "marks"  # where a drill's jobs write their lifecycle marks, in its folder
SPEC_IDS = {
    "node-loss": ["G1", "G4"],
    "disk-full": ["G4", "A2"],
    "storage-revoked": ["G4", "E3"],
    "gpu-delay": ["G4", "Q1", "Q4"],
    "checkpoint-corrupt": ["G4", "A2"],
}
