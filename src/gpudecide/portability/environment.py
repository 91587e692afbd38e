"""Environment snapshot stored with every checkpoint: the execution layer of SPEC E2.

Python, PyTorch, CUDA and driver versions, the GPU model, a digest of the installed-package
list (name==version, sorted) and the container image digest when the caller knows it. A
resume compares the snapshot of the contour it runs in with the one in the checkpoint.
"""

from __future__ import annotations

import hashlib
import platform
import shutil
import subprocess
import sys
from importlib import metadata
from typing import Any

import torch

__all__ = [
    "package_list",
    "snapshot",
]


def package_list() -> list[str]:
    """`name==version` of every installed distribution, sorted (case-insensitively)."""
    seen: dict[str, str] = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name:
            seen[name.lower()] = f"{name}=={dist.version}"
    return [seen[k] for k in sorted(seen)]


def _driver_version() -> str | None:
    tool = shutil.which("nvidia-smi")
    if tool is None:
        return None
    try:
        done = subprocess.run(
            [tool, "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    first = done.stdout.strip().splitlines()
    return first[0].strip() if done.returncode == 0 and first else None


def snapshot(device: str = "cpu", container_digest: str | None = None) -> dict[str, Any]:
    """What this process runs on; values a machine cannot tell are None, never guessed."""
    packages = package_list()
    cuda = torch.cuda.is_available()
    return {
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "torch": torch.__version__,
        "cuda_runtime": torch.version.cuda,
        "cuda_available": cuda,
        "gpu_model": torch.cuda.get_device_name(0) if cuda else None,
        "gpu_count": torch.cuda.device_count() if cuda else 0,
        "driver": _driver_version() if cuda else None,
        "device": device,
        "cpu_threads": torch.get_num_threads(),
        "packages_sha256": hashlib.sha256("\n".join(packages).encode()).hexdigest(),
        "package_count": len(packages),
        "container_digest": container_digest,
        "executable": sys.executable,
    }
