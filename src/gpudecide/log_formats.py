"""The job-log formats a workspace's `logs:` and the commands' `--format` name.

A module of its own, with nothing behind it, so that the commands' options can list the
formats without loading the settings' models (`gpudecide.log_settings`).
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["FORMATS", "LogFormat"]

LogFormat = Literal[
    "auto", "sacct", "slurm-json", "csv", "jsonl", "kubernetes", "sagemaker", "openai"
]
FORMATS: tuple[str, ...] = get_args(LogFormat)
