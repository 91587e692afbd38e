"""The one /proc/self/mountinfo reader: device numbers, escaped mount points, types, and any
text the file could hold (the kernel's own format: Documentation/filesystems/proc.rst)."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import example, given
from hypothesis import strategies as st

from gpudecide import mountinfo
from gpudecide.artifacts import places
from gpudecide.drills import storage_url
from gpudecide.mountinfo import Mount

TEXT = (
    "22 28 0:20 / /proc rw,nosuid shared:12 - proc proc rw\n"
    "23 28 0:21 / /sys rw shared:2 - sysfs sysfs rw\n"
    "28 1 253:1 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
    "40 28 0:35 / /mnt/with\\040space rw - tmpfs tmpfs rw\n"
    "41 28 0:36 / /mnt/tab\\011and\\134slash rw master:3 shared:9 - xfs /dev/x rw\r\n"
    "garbage line\n"
    "42 28 x:y / /odd rw - ext4 /dev/x rw\n"
    "43 28 0:37 / /no-type rw - \n"
)


def test_parse_reads_device_point_and_type() -> None:
    assert mountinfo.parse(TEXT) == [
        Mount(os.makedev(0, 20), "/proc", "proc"),
        Mount(os.makedev(0, 21), "/sys", "sysfs"),
        Mount(os.makedev(253, 1), "/", "ext4"),
        Mount(os.makedev(0, 35), "/mnt/with space", "tmpfs"),
        # any number of optional fields; octal escapes undone; a CRLF line end dropped
        Mount(os.makedev(0, 36), "/mnt/tab\tand\\slash", "xfs"),
        # a device field that is not one: the mount point and type are still known
        Mount(None, "/odd", "ext4"),
    ]


def test_this_process_sees_proc_and_its_root() -> None:
    mounts = mountinfo.read()
    by_point = {m.point: m for m in mounts}
    assert by_point["/proc"].fstype == "proc"
    assert by_point["/proc"].dev == os.stat("/proc").st_dev
    assert "/" in by_point
    # the readers built on it: the device of /proc is a kernel file system, /tmp's is not
    assert places.kernel_filesystem_of_device(os.stat("/proc").st_dev) == "proc"
    assert places.kernel_filesystem_of_device(os.stat("/tmp").st_dev) is None
    assert storage_url.filesystem_type(Path("/proc/self")) == "proc"
    assert storage_url.filesystem_type(Path("/sys/kernel")) == "sysfs"


@given(st.text())
@example("1 2 3:4 / /a\\777 rw - ext4 x rw")  # an octal escape above 0o377 is still one char
@example("1 2 3:4 / \\0400 rw - ext4 x rw")
@example("1 2 99999:1 / /big rw - ext4 x rw")  # a major number no device has
def test_parse_takes_any_text(text: str) -> None:
    mounts = mountinfo.parse(text)
    assert len(mounts) <= text.count("\n") + 1
    for m in mounts:
        assert isinstance(m.point, str) and m.fstype and " " not in m.fstype
        assert m.dev is None or m.dev >= 0
