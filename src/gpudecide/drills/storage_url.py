"""The drills' external checkpoint storage, checked before any drill starts (SPEC G4; issue 28).

`--storage` (or drills.yaml's `storage`) is one of:

- `node`: checkpoints only on the node's own disk (the node-loss drill's negative case);
- a folder (a path, or `file://PATH`): it must be a folder we can write, or one we can make,
  on a real file system: a file, `/proc`, `/sys` or a device tree is refused, never written
  under as if it were storage;
- `s3://BUCKET/PREFIX`: the bucket is named by S3's rules; credentials come from the
  environment as the AWS CLI reads them (variables, profiles, an endpoint given by
  `AWS_ENDPOINT_URL`), never from the URL: a URL with user information is refused and the
  key is not repeated anywhere. The bucket is asked once before the drills run, so that a
  closed port, missing credentials or a refusal is one line, exit 2, and no record.

Any other scheme is refused naming the field it came from.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from gpudecide import mountinfo
from gpudecide.drills.names import NODE_LOCAL
from gpudecide.errors import InputError, excerpt

__all__ = [
    "S3_PROBE_OPTIONS",
    "check",
    "filesystem_type",
    "probe_s3",
]

# One quick question to the bucket: no retries, short timeouts (a closed port answers at once,
# a black hole within seconds).
S3_PROBE_OPTIONS = {
    "config_kwargs": {"connect_timeout": 5, "read_timeout": 10, "retries": {"max_attempts": 1}},
    "skip_instance_cache": True,
}
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_IP = re.compile(r"^\d+\.\d+\.\d+\.\d+$")


def filesystem_type(path: Path) -> str | None:
    """The type of the file system `path` lies on (its nearest existing part), if known."""
    current = path
    while not current.exists() and current.parent != current:
        current = current.parent
    try:
        resolved = str(current.resolve())
    except OSError:
        return None
    best: tuple[int, str] | None = None
    for m in mountinfo.read():
        inside = resolved == m.point or resolved.startswith(m.point.rstrip("/") + "/")
        if inside and (best is None or len(m.point) > best[0]):
            best = (len(m.point), m.fstype)
    return best[1] if best else None


@dataclass(frozen=True)
class _Where:
    """Where the storage was given: the flag, or drills.yaml's file and line."""

    field: str
    path: str | Path | None = None
    line: int | None = None

    def error(self, template: str, hint: str | None, **values: object) -> InputError:
        return InputError(
            template, path=self.path, line=self.line, field=self.field, hint=hint, **values
        )


def _folder(given: str, where: _Where) -> str:
    folder = Path(given).expanduser()
    folder = folder if folder.is_absolute() else Path.cwd() / folder
    kind = filesystem_type(folder)
    if kind in mountinfo.KERNEL_FILESYSTEMS:
        raise where.error(
            "storage {folder} is on a {fstype} file system: checkpoints cannot be kept there",
            "give a folder on a disk, s3://BUCKET/PREFIX, or node",
            folder=str(folder),
            fstype=kind,
        )
    if folder.exists() and not folder.is_dir():
        raise where.error(
            "storage {folder} is not a folder",
            "give a folder (made if missing), s3://BUCKET/PREFIX, or node",
            folder=str(folder),
        )
    current = folder
    while not current.exists() and current.parent != current:
        current = current.parent
    if not current.is_dir() or not os.access(current, os.W_OK | os.X_OK):
        raise where.error(
            "storage {folder} cannot be written",
            "give a folder the drills may write to",
            folder=str(folder),
        )
    return str(folder)


def _holds_credentials(given: str) -> bool:
    """User information in the URL: `KEY@bucket`, `KEY:SECRET@bucket`, also where the secret
    holds a `/` and a URL parser takes the rest for the path."""
    rest = given.split("://", 1)[1]
    before, at, _after = rest.rpartition("@")
    return bool(at) and ("@" in rest.split("/", 1)[0] or ":" in before)


def _s3(given: str, where: _Where) -> str:
    parts = urlsplit(given)
    if _holds_credentials(given):
        # Not even the bucket's spelling as given: the user information is a key.
        raise where.error(
            "the storage URL holds credentials (user information before '@')",
            "give credentials in the environment (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
            "or AWS_PROFILE), never in the URL",
        )
    bucket = parts.netloc
    if not _BUCKET.match(bucket) or ".." in bucket or _IP.match(bucket):
        raise where.error(
            "{bucket!r} is not an S3 bucket name",
            "3-63 lower-case letters, digits, '.' and '-', starting and ending with a letter or "
            "digit: s3://BUCKET/PREFIX",
            bucket=excerpt(bucket, 63)[1:-1],
        )
    if parts.query or parts.fragment:
        raise where.error(
            "the storage URL has a query or a fragment",
            "s3://BUCKET/PREFIX, with options in the environment",
        )
    prefix = parts.path.strip("/")
    return f"s3://{bucket}/{prefix}" if prefix else f"s3://{bucket}"


def check(
    value: str | None,
    *,
    field: str,
    path: str | Path | None = None,
    line: int | None = None,
) -> str | None:
    """The storage as the drills use it (None: a folder under the run; `node`; an absolute
    folder; `s3://BUCKET[/PREFIX]`), or the one-line error naming `field` (and the file and
    line of drills.yaml it came from)."""
    where = _Where(field, path, line)
    if value is None or value == NODE_LOCAL:
        return value
    if not value.strip():
        raise where.error("the storage is empty", "a folder, s3://BUCKET/PREFIX, or node")
    if "://" not in value:
        return _folder(value, where)
    scheme = value.split("://", 1)[0].lower()
    if scheme == "file":
        parts = urlsplit(value)
        if parts.netloc not in ("", "localhost"):
            raise where.error(
                "file:// storage on another host ({host})",
                "mount it here and give the folder",
                host=parts.netloc.rpartition("@")[2][:64],
            )
        return _folder(parts.path, where)
    if scheme == "s3":
        return _s3(value, where)
    raise where.error(
        "storage scheme {scheme}:// is not one the drills write to",
        "a folder, s3://BUCKET/PREFIX, or node",
        scheme=scheme[:16],
    )


def _endpoint() -> str:
    """The S3 endpoint the environment names (AWS's own when none), without user info."""
    url = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL") or ""
    if not url:
        return "AWS"
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"


def probe_s3(
    url: str, *, field: str, path: str | Path | None = None, line: int | None = None
) -> None:
    """Ask the bucket once (list the prefix): a closed port, missing credentials, a refusal
    or a missing bucket is the one-line error; no exception text is quoted (it can hold a
    key id), only its kind."""
    from gpudecide.portability.storage import open_storage

    where = _Where(field, path, line)
    bucket = urlsplit(url).netloc
    try:
        store = open_storage(url, dict(S3_PROBE_OPTIONS))
        store.fs.ls(store.root, refresh=True)
    except FileNotFoundError:
        if not urlsplit(url).path.strip("/"):
            raise where.error(
                "no bucket {bucket} at {endpoint}",
                "create it, or name another",
                bucket=bucket,
                endpoint=_endpoint(),
            ) from None
        return  # a prefix with nothing under it yet: the first checkpoint makes it
    except PermissionError:
        raise where.error(
            "access denied to s3://{bucket} at {endpoint}",
            "check the credentials and the bucket policy (403)",
            bucket=bucket,
            endpoint=_endpoint(),
        ) from None
    except InputError as exc:
        # The storage layer's own refusal (a missing driver), named by our field.
        raise where.error(exc.template, exc.hint_template, **exc.values) from None
    except Exception as exc:
        kind = type(exc).__name__
        if "Credential" in kind:
            raise where.error(
                "no credentials for s3://{bucket}",
                "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE",
                bucket=bucket,
            ) from None
        raise where.error(
            "cannot reach s3://{bucket} at {endpoint} ({kind})",
            "check the endpoint (AWS_ENDPOINT_URL) and the network",
            bucket=bucket,
            endpoint=_endpoint(),
            kind=kind,
        ) from None
