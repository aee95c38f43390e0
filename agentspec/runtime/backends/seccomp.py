"""The sandbox's seccomp filter, a classic BPF program for `bwrap --seccomp`.

It refuses (EPERM) the system calls that reach other processes or the kernel's key stores
(ptrace, process_vm_readv/writev, perf_event_open, bpf, userfaultfd, the keyring calls);
every call that sets a file's mode when the mode asks for set-uid or set-gid (chmod and its
kin, open/creat/mknod/mkdir with such a mode); clone and unshare asking for a new user
namespace; other architectures' calls and x32's. It answers ENOSYS, as a kernel without them
would, to `io_uring_*` (whose requests bypass this filter), `openat2` and `clone3` (whose
arguments sit in a structure a filter cannot read; the C library falls back to `openat` and
`clone`).

Set-uid files matter because the workspace is a host directory: a set-uid copy of a shell
left there by a sandbox whose user is the host's root (or any user) would run as that user
for every other account of the host.
"""

from __future__ import annotations

import os
import struct

__all__ = ["CLONE_NEWUSER", "SET_ID_BITS", "seccomp_filter"]

SET_ID_BITS = 0o6000
"""S_ISUID | S_ISGID"""

_DENIED = ("ptrace", "process_vm_readv", "process_vm_writev", "perf_event_open", "add_key",
           "request_key", "keyctl", "bpf", "userfaultfd")
_ABSENT = ("io_uring_setup", "io_uring_enter", "io_uring_register", "openat2", "clone3")
#: system calls refused when an argument (index) has any of the bits of a mask: a mode
#: with set-uid or set-gid, or namespace flags asking for a new user namespace
CLONE_NEWUSER = 0x10000000
_ARGUMENT_BITS = {
    **{name: (index, SET_ID_BITS) for name, index in (
        ("open", 2), ("creat", 1), ("mkdir", 1), ("mknod", 1), ("chmod", 1), ("fchmod", 1),
        ("openat", 3), ("mkdirat", 2), ("mknodat", 2), ("fchmodat", 2), ("fchmodat2", 2))},
    "clone": (0, CLONE_NEWUSER), "unshare": (0, CLONE_NEWUSER)}

#: (audit architecture, the x32 bit or 0, {name: number}) per machine
_SYSCALLS = {
    "x86_64": (0xC000003E, 0x40000000, {
        "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311,
        "perf_event_open": 298, "add_key": 248, "request_key": 249, "keyctl": 250,
        "bpf": 321, "userfaultfd": 323,
        "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "openat2": 437,
        "clone": 56, "unshare": 272, "clone3": 435,
        "open": 2, "creat": 85, "mkdir": 83, "mknod": 133, "chmod": 90, "fchmod": 91,
        "openat": 257, "mkdirat": 258, "mknodat": 259, "fchmodat": 268, "fchmodat2": 452}),
    "aarch64": (0xC00000B7, 0, {  # the generic table: no open, creat, mkdir, mknod, chmod
        "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271,
        "perf_event_open": 241, "add_key": 217, "request_key": 218, "keyctl": 219,
        "bpf": 280, "userfaultfd": 282,
        "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "openat2": 437,
        "clone": 220, "unshare": 97, "clone3": 435,
        "fchmod": 52, "openat": 56, "mkdirat": 34, "mknodat": 33, "fchmodat": 53,
        "fchmodat2": 452}),
}
_LOAD, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW, _EPERM, _ENOSYS = 0x7FFF0000, 0x00050000 | 1, 0x00050000 | 38
_ARCH, _NR, _ARGS = 4, 0, 16  # offsets in struct seccomp_data; args are 64-bit, little-endian


def seccomp_filter(machine: str | None = None) -> bytes | None:
    """The program for this machine (or `machine`); None on a machine not listed."""
    found = _SYSCALLS.get(machine or os.uname().machine)
    if found is None:
        return None
    arch, x32, numbers = found
    # instructions as (code, jump-if-true label, jump-if-false label, k); labels are
    # resolved to offsets at the end ("" = the next instruction)
    program: list[tuple[int, str, str, int]] = [
        (_LOAD, "", "", _ARCH), (_JEQ, "", "deny", arch), (_LOAD, "", "", _NR)]
    if x32:
        program.append((_JGE, "deny", "", x32))
    program += [(_JEQ, "deny", "", numbers[name]) for name in _DENIED]
    program += [(_JEQ, "absent", "", numbers[name]) for name in _ABSENT]
    checked = [(name, check) for name, check in _ARGUMENT_BITS.items() if name in numbers]
    program += [(_JEQ, f"arg{check}", "", numbers[name]) for name, check in checked]
    program.append((_RET, "", "", _ALLOW))
    labels: dict[str, int] = {}
    for index, mask in sorted({check for _, check in checked}):  # BPF jumps only forward
        labels[f"arg{(index, mask)}"] = len(program)
        program += [(_LOAD, "", "", _ARGS + 8 * index), (_JSET, "deny", "", mask),
                    (_RET, "", "", _ALLOW)]
    labels["deny"] = len(program)
    program.append((_RET, "", "", _EPERM))
    labels["absent"] = len(program)
    program.append((_RET, "", "", _ENOSYS))

    def offset(at: int, label: str) -> int:
        return 0 if not label else labels[label] - at - 1

    return b"".join(struct.pack("=HBBI", code, offset(at, true), offset(at, false), k)
                    for at, (code, true, false, k) in enumerate(program))
