"""The faults drills inject, each real and each undoable (SPEC G4).

- `SmallFilesystem`: a tiny tmpfs (or, where tmpfs cannot be mounted, a loop-mounted ext4
  image) as the job's working folder, so the kernel itself answers ENOSPC mid-checkpoint;
  `FaultUnsupported` says loudly why neither works on this machine. A run killed before its
  rollback (SIGKILL: no handler runs) leaves it mounted: `clear_stale` finds such mounts
  under the drills' folder at the next disk-full drill and unmounts them, or says why not.
- `LocalRevocation`: the storage folder made read-only for the job (mode 0555); when the
  drill runs as root, the job runs without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH /
  CAP_FOWNER, so the kernel denies it like any user (root otherwise ignores file modes).
- `MotoS3`: a local S3 API server (moto_server on 127.0.0.1) with IAM authentication on; the
  job's user loses its policy (403 AccessDenied) and gets it back in the rollback.
- `flip_bytes`: bytes flipped in one file of a checkpoint copy in external storage.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpudecide import mountinfo
from gpudecide.message import Message, english, message
from gpudecide.portability.storage import Storage

__all__ = [
    "MOUNT_NAME",
    "FaultUnsupported",
    "LocalRevocation",
    "MotoS3",
    "SmallFilesystem",
    "Stale",
    "clear_stale",
    "flip_bytes",
    "stale_mounts",
]

# The mount point's name inside a disk-full drill's folder: how a stale one is recognised.
MOUNT_NAME = "small-disk"


class FaultUnsupported(Exception):
    """This machine cannot inject the fault (no mount rights, no moto_server, ...).

    `said` is the reason as people read it; a plain text (a system's own words) is kept as
    written. `str(exc)` is the English.
    """

    def __init__(self, said: Message | str) -> None:
        self.said: Message = (
            message("drills", "{text}", text=said) if isinstance(said, str) else said
        )
        super().__init__(english(self.said))


@dataclass
class SmallFilesystem:
    """A filesystem of `size_bytes` mounted at `mountpoint` until `unmount`."""

    mountpoint: Path
    size_bytes: int
    kind: str = ""
    image: Path | None = None
    tried: list[str] = field(default_factory=list)

    def mount(self) -> str:
        """Mount tmpfs, else a loop ext4 image; raise FaultUnsupported with both reasons."""
        self.mountpoint.mkdir(parents=True, exist_ok=True)
        tmpfs = ["mount", "-t", "tmpfs", "-o", f"size={self.size_bytes},mode=0777"]
        done = _run([*tmpfs, "tmpfs", str(self.mountpoint)])
        if done is None:
            self.kind = "tmpfs"
            return self.kind
        self.tried.append(f"tmpfs: {done}")
        # The image beside the mount point: a stale one is found and removed with it.
        self.image = self.mountpoint.with_name(self.mountpoint.name + ".img")
        with open(self.image, "wb") as fh:
            fh.truncate(max(self.size_bytes, 1 << 20))
        steps = [
            ["mkfs.ext4", "-q", "-F", "-m", "0", str(self.image)],
            ["mount", "-o", "loop", str(self.image), str(self.mountpoint)],
        ]
        for argv in steps:
            problem = _run(argv)
            if problem is not None:
                self.tried.append(f"loop ext4: {problem}")
                self.image.unlink(missing_ok=True)
                raise FaultUnsupported(
                    message(
                        "drills",
                        "cannot mount a small filesystem for the disk-full drill ({tried}): "
                        "run it as root, or where mount is allowed",
                        tried="; ".join(self.tried),
                    )
                )
        self.kind = "loop-ext4"
        return self.kind

    def unmount(self) -> str:
        """Unmount and remove what `mount` made (a rollback: safe to call twice). The mount
        point itself is asked: a stop signal between the kernel's mount and `mount`
        returning leaves `kind` unset while the filesystem is there."""
        if self.kind or os.path.ismount(self.mountpoint):
            _run(["umount", "-l", str(self.mountpoint)])
            self.kind = ""
        if self.image is not None:
            self.image.unlink(missing_ok=True)
            self.image = None
        return "unmounted"

    def free_bytes(self) -> int:
        """Bytes still free on the mounted filesystem."""
        st = os.statvfs(self.mountpoint)
        return st.f_bavail * st.f_frsize


@dataclass(frozen=True)
class Stale:
    """A small filesystem an earlier, killed drill left mounted, and what became of it."""

    path: str
    removed: bool
    problem: str | None = None


def stale_mounts(drills_root: Path) -> list[Path]:
    """Small filesystems of disk-full drills still mounted under `drills_root`."""
    try:
        root = drills_root.resolve()
    except OSError:
        return []
    points = (Path(m.point) for m in mountinfo.read())
    return [p for p in points if p.name == MOUNT_NAME and p.is_relative_to(root)]


def clear_stale(drills_root: Path) -> list[Stale]:
    """Unmount what earlier, killed drills left mounted under `drills_root` (and remove its
    loop image); each one found, with what happened to it."""
    out = []
    for point in stale_mounts(drills_root):
        problem = _run(["umount", "-l", str(point)])
        if problem is None:
            point.with_name(point.name + ".img").unlink(missing_ok=True)
        out.append(Stale(str(point), problem is None, problem))
    return out


def _run(argv: list[str]) -> str | None:
    """None when the command worked, else its error (missing program, refusal)."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=60)
    except FileNotFoundError:
        return f"{argv[0]} not found"
    if done.returncode != 0:
        return (done.stderr or done.stdout).strip() or f"{argv[0]} exited {done.returncode}"
    return None


@dataclass
class LocalRevocation:
    """Takes write permission on a local storage folder away, and gives it back."""

    folder: Path
    saved: dict[Path, int] = field(default_factory=dict)

    def revoke(self) -> str:
        """Every folder under the storage becomes r-x (0555): nothing new can be written."""
        for p in [self.folder, *(q for q in self.folder.rglob("*") if q.is_dir())]:
            self.saved[p] = p.stat().st_mode & 0o7777
            p.chmod(0o555)
        return f"chmod 0555 on {len(self.saved)} folders under {self.folder}"

    def restore(self) -> str:
        """Put every mode back as it was."""
        for p, mode in self.saved.items():
            if p.exists():
                p.chmod(mode)
        n = len(self.saved)
        self.saved.clear()
        return f"modes restored on {n} folders"


def flip_bytes(
    store: Storage, name: str, count: int = 16, offset: int | None = None
) -> dict[str, Any]:
    """Invert `count` bytes of the stored file `name` (in the middle by default), in place."""
    path = f"{store.root}/{name}"
    data = bytearray(store.fs.cat_file(path))
    start = len(data) // 2 if offset is None else offset
    for i in range(start, min(start + count, len(data))):
        data[i] ^= 0xFF
    store.fs.pipe_file(path, bytes(data))
    return {
        "file": store.child_url(name),
        "offset": start,
        "bytes_flipped": count,
        "size": len(data),
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class MotoS3:
    """A moto_server on loopback with a bucket, an admin and a job user with an s3:* policy."""

    bucket: str
    proc: subprocess.Popen[bytes] | None = None
    url: str = ""
    job_key: tuple[str, str] = ("", "")
    admin_key: tuple[str, str] = ("", "")

    POLICY = json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}],
        }
    )

    def start(self) -> str:
        """Start the server, create users and bucket, then switch authentication on."""
        exe = Path(sys.executable).parent / "moto_server"
        if not exe.exists():
            found = shutil.which("moto_server")
            if found is None:
                raise FaultUnsupported(
                    message("drills", "moto_server is not installed (pip install 'moto[server]')")
                )
            exe = Path(found)
        port = _free_port()
        self.proc = subprocess.Popen(
            [str(exe), "-H", "127.0.0.1", "-p", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"{self.url}/moto-api/", timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    self.stop()
                    raise FaultUnsupported(message("drills", "moto_server did not start")) from None
                time.sleep(0.1)
        try:
            self._set_up_auth()
        except Exception:
            self.stop()  # never leave a server behind a failed set-up
            raise
        return f"moto_server at {self.url}, IAM authentication on, bucket {self.bucket}"

    def _set_up_auth(self) -> None:
        """Users, keys and bucket while authentication is off; then switch it on."""
        iam = self._client("iam", ("testing", "testing"))
        for user, action in (("drill-admin", "*"), ("training-job", None)):
            iam.create_user(UserName=user)
            doc = self.POLICY if action is None else self.POLICY.replace('"s3:*"', '"*"')
            iam.put_user_policy(UserName=user, PolicyName="access", PolicyDocument=doc)
            key = iam.create_access_key(UserName=user)["AccessKey"]
            pair = (key["AccessKeyId"], key["SecretAccessKey"])
            if user == "drill-admin":
                self.admin_key = pair
            else:
                self.job_key = pair
        self._client("s3", self.admin_key).create_bucket(Bucket=self.bucket)
        req = urllib.request.Request(
            f"{self.url}/moto-api/reset-auth",
            data=b"0",
            method="POST",
            headers={"Content-Type": "text/plain"},
        )
        urllib.request.urlopen(req).close()

    def _client(self, service: str, key: tuple[str, str]) -> Any:
        import boto3  # type: ignore[import-untyped]  # moto[server] brings it (IAM set-up)

        return boto3.client(
            service,
            endpoint_url=self.url,
            aws_access_key_id=key[0],
            aws_secret_access_key=key[1],
            region_name="us-east-1",
        )

    def options(self, key: tuple[str, str] | None = None) -> dict[str, Any]:
        """s3fs options for the job's (or another) key."""
        k = key or self.job_key
        return {"endpoint_url": self.url, "key": k[0], "secret": k[1], "skip_instance_cache": True}

    def revoke(self) -> str:
        """Delete the job user's policy: its next request gets 403 AccessDenied."""
        self._client("iam", self.admin_key).delete_user_policy(
            UserName="training-job", PolicyName="access"
        )
        return "policy of IAM user training-job deleted"

    def restore(self) -> str:
        """Give the policy back."""
        self._client("iam", self.admin_key).put_user_policy(
            UserName="training-job", PolicyName="access", PolicyDocument=self.POLICY
        )
        return "policy of IAM user training-job restored"

    def stop(self) -> str:
        """Stop the server."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
        return "moto_server stopped"
