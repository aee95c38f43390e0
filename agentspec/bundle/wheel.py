"""A wheel of the agentspec that is running, for a bundle to install from.

agentspec is not necessarily on the package index in this version, so a bundle carries the
exact agentspec that compiled it. The wheel is assembled from the installed package and its own
metadata, which works for an editable install as for a regular one; it is byte-for-byte
the same for the same code (fixed timestamps, sorted entries).
"""

from __future__ import annotations

import base64
import hashlib
import io
import zipfile
from importlib import metadata
from pathlib import Path

from agentspec.bundle.copying import secret_name
from agentspec.contract.extras import DISTRIBUTION

__all__ = ["DISTRIBUTION", "NotInstalled", "agentspec_wheel", "distribution", "version"]

_EPOCH = (1980, 1, 1, 0, 0, 0)
_WHEEL = "Wheel-Version: 1.0\nGenerator: agentspec\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


class NotInstalled(RuntimeError):
    """agentspec runs from a source tree that pip did not install: no wheel can be made."""


def distribution() -> metadata.Distribution:
    """The installed agentspec: its `.dist-info` (an `.egg-info` that a source checkout
    leaves in the working directory is older metadata, without a METADATA file)."""
    for dist in metadata.distributions(name=DISTRIBUTION):
        if dist.read_text("METADATA"):
            return dist
    raise NotInstalled("agentspec is not installed as a distribution (no .dist-info with "
                       "METADATA), so the bundle cannot carry it")


def version() -> str:
    return distribution().version


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _package_files(package: Path) -> list[tuple[str, bytes]]:
    """The files of the `agentspec` package, without caches and compiled files."""
    files = []
    for path in sorted(package.rglob("*")):
        relative = path.relative_to(package.parent)
        if path.is_symlink() or not path.is_file() or "__pycache__" in relative.parts \
                or path.suffix in (".pyc", ".pyo") or any(
                    part.startswith(".") or secret_name(part) for part in relative.parts):
            continue
        files.append((relative.as_posix(), path.read_bytes()))
    return files


def agentspec_wheel() -> tuple[str, bytes]:
    """The wheel's file name and bytes."""
    import agentspec

    dist = distribution()
    number = dist.version
    stem = f"{DISTRIBUTION.replace('-', '_')}-{number}"  # a wheel's file names use `_`
    info = f"{stem}.dist-info"
    entries = _package_files(Path(agentspec.__file__).resolve().parent)
    meta = dist.read_text("METADATA") or ""
    entries.append((f"{info}/METADATA", meta.encode("utf-8")))
    entries.append((f"{info}/WHEEL", _WHEEL.encode("utf-8")))
    for optional in ("entry_points.txt", "top_level.txt"):
        text = dist.read_text(optional)
        if text is not None:
            entries.append((f"{info}/{optional}", text.encode("utf-8")))
    record = "".join(_record_line(n, d) + "\n" for n, d in entries) + f"{info}/RECORD,,\n"
    entries.append((f"{info}/RECORD", record.encode("utf-8")))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries:
            item = zipfile.ZipInfo(name, date_time=_EPOCH)
            item.external_attr = 0o644 << 16
            item.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(item, data)
    return f"{stem}-py3-none-any.whl", buffer.getvalue()
