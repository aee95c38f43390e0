"""The sandbox's own layout, which validate keeps mounts out of and the runtime builds."""

from __future__ import annotations

__all__ = ["RESERVED_TARGETS", "SYSTEM_TOP", "WORKSPACE"]

#: where the backend's root appears inside the sandbox
WORKSPACE = "/workspace"
#: the system directories bound read-only at the sandbox's top
SYSTEM_TOP = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
#: sandbox paths a mount may not cover (the sandbox's own layout)
RESERVED_TARGETS = ("/", WORKSPACE, "/proc", "/dev", "/tmp", "/usr", "/etc",
                    *(f"/{name}" for name in SYSTEM_TOP))
