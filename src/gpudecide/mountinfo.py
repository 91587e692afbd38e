"""The mounts this process sees, from /proc/self/mountinfo: the one reader of that file for
the artifact commands (which file system a path's device is on) and the drills (which file
system a storage folder lies on, which of their small file systems are still mounted)."""

from __future__ import annotations

import os
import re
from typing import NamedTuple

from gpudecide.textlines import split_lines

__all__ = ["KERNEL_FILESYSTEMS", "Mount", "parse", "read"]

# File systems whose files are the kernel's interfaces and state: nothing is stored there,
# nothing read there is an export.
KERNEL_FILESYSTEMS = frozenset(
    {
        "proc", "sysfs", "devtmpfs", "devpts", "cgroup", "cgroup2", "debugfs", "tracefs",
        "securityfs", "pstore", "bpf", "configfs", "fusectl", "mqueue", "binfmt_misc",
        "efivarfs", "nsfs", "rpc_pipefs", "autofs", "selinuxfs", "hugetlbfs",
    }
)  # fmt: skip
_ESCAPE = re.compile(r"\\([0-7]{3})")


class Mount(NamedTuple):
    """One mount: its device number (st_dev of its files; None where the line's is not one),
    its mount point (octal escapes undone) and its file system type."""

    dev: int | None
    point: str
    fstype: str


def _device(field: str) -> int | None:
    major, colon, minor = field.partition(":")
    if not (colon and major.isascii() and major.isdigit() and minor.isascii()):
        return None
    if not minor.isdigit() or int(major) >= 1 << 12 or int(minor) >= 1 << 20:
        return None
    return os.makedev(int(major), int(minor))


def parse(text: str) -> list[Mount]:
    """The mounts of a mountinfo text (`36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 -
    ext3 /dev/root rw`), in its order; a line that is not one is left out.

    The kernel escapes a space, tab, newline or backslash in a mount point as octal, so the
    fields before ` - ` are split at spaces safely; the optional fields between them vary in
    number, which is why the type is read after the separator.
    """
    out = []
    for line in split_lines(text):
        left, sep, right = line.partition(" - ")
        fields = left.split()
        kind = right.split()
        if not sep or len(fields) < 5 or not kind:
            continue
        point = _ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), fields[4])
        out.append(Mount(_device(fields[2]), point, kind[0]))
    return out


def read() -> list[Mount]:
    """The mounts this process sees now (none where /proc/self/mountinfo cannot be read)."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as handle:
            return parse(handle.read())
    except OSError:
        return []
