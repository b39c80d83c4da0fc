"""Sandbox: a process that cannot open a network connection, whatever runs in it (Linux seccomp).

The query workers (:mod:`kg.serve.pool`) call :func:`deny_network` before they
open their graph, so that a SPARQL ``SERVICE`` that got past kg's lexer
(:mod:`kg.sparql`) still cannot reach another server: ``socket()`` for IPv4,
IPv6, netlink and packet sockets, and ``io_uring_setup()``, fail with EPERM.
Unix sockets and pipes stay open. The filter is a small BPF program written
here by hand, since the standard library has no binding for seccomp.
"""
from __future__ import annotations

import ctypes
import logging
import os
import platform
import struct
import sys
import threading

_log = logging.getLogger(__name__)

# Linux's seccomp: a BPF program the kernel runs on each system call of the process.
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7, "arm64": 0xC00000B7}
_SYSCALL_NUMBERS = {  # socket, io_uring_setup (its rings can open sockets too), seccomp
    "x86_64": (41, 425, 317), "aarch64": (198, 425, 277), "arm64": (198, 425, 277)}
_X32_SYSCALL_BIT = 0x40000000  # x86_64's x32 calls: not used here, refused whole
#: Address families a worker may not open sockets of: IPv4, IPv6, netlink and raw packets.
#: AF_UNIX stays open: the worker's pipe to its server is one.
DENIED_FAMILIES = (2, 10, 16, 17)
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
_SECCOMP_SET_MODE_FILTER, _SECCOMP_FILTER_FLAG_TSYNC = 1, 1
_RET_ALLOW, _RET_EPERM = 0x7FFF0000, 0x00050000 | 1  # SECCOMP_RET_ERRNO | EPERM: the call fails, nothing dies
_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _network_filter(machine: str) -> bytes:
    """The BPF program (struct sock_filter[]) refusing, with EPERM, socket() for the families of
    :data:`DENIED_FAMILIES` and io_uring_setup() on ``machine``; every other call is allowed."""
    socket_call, io_uring_setup, _ = _SYSCALL_NUMBERS[machine]
    code = [("ld", 4),  # seccomp_data.arch
            ("jne", _AUDIT_ARCH[machine], "deny"),  # another ABI's calls (i386's socketcall...): refused
            ("ld", 0),  # seccomp_data.nr
            ("jge", _X32_SYSCALL_BIT, "deny"),
            ("jeq", io_uring_setup, "deny"),
            ("jne", socket_call, "allow"),
            ("ld", 16 if sys.byteorder == "little" else 20)]  # seccomp_data.args[0]'s low half: the family
    code += [("jeq", family, "deny") for family in DENIED_FAMILIES]
    code += [("label", "allow"), ("ret", _RET_ALLOW), ("label", "deny"), ("ret", _RET_EPERM)]
    labels, at = {}, 0
    for op, *rest in code:
        if op == "label":
            labels[rest[0]] = at
        else:
            at += 1
    program, at = [], 0
    for op, *rest in code:
        if op == "label":
            continue
        at += 1  # jumps count from the next instruction
        if op == "ld":
            program.append(struct.pack("=HBBI", _LD_W_ABS, 0, 0, rest[0]))
        elif op == "ret":
            program.append(struct.pack("=HBBI", _RET_K, 0, 0, rest[0]))
        else:
            value, target = rest
            skip = labels[target] - at
            jump, true, false = {"jeq": (_JEQ_K, skip, 0), "jne": (_JEQ_K, 0, skip), "jge": (_JGE_K, skip, 0)}[op]
            program.append(struct.pack("=HBBI", jump, true, false, value))
    return b"".join(program)


def deny_network() -> bool:
    """Make this process, and every thread it has or starts, unable to open an IPv4, IPv6,
    netlink or packet socket: the call fails with EPERM (Linux seccomp, on x86_64 and aarch64).
    Irrevocable, and inherited by child processes. Returns whether it took; where it cannot
    (another system, a kernel without seccomp), says so in the log and returns False.

    A query worker calls it before it opens its graph: whatever SPARQL gets past kg's filter,
    the engine cannot reach another server from the worker.
    """
    machine = platform.machine().lower()
    if not sys.platform.startswith("linux") or machine not in _SYSCALL_NUMBERS:
        _log.warning("Query workers keep network access: no seccomp filter for %s on %s; "
                     "kg's SERVICE filter is their only guard.", machine, sys.platform)
        return False
    program = _network_filter(machine)
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, ctypes.c_ulong(1), ctypes.c_ulong(0), ctypes.c_ulong(0),
                  ctypes.c_ulong(0)) != 0:
        return _not_denied("prctl(PR_SET_NO_NEW_PRIVS)", ctypes.get_errno())
    seccomp = _SYSCALL_NUMBERS[machine][2]
    if libc.syscall(ctypes.c_long(seccomp), ctypes.c_long(_SECCOMP_SET_MODE_FILTER),
                    ctypes.c_long(_SECCOMP_FILTER_FLAG_TSYNC), ctypes.byref(fprog)) == 0:
        return True
    if threading.active_count() == 1 and libc.prctl(_PR_SET_SECCOMP, ctypes.c_ulong(_SECCOMP_MODE_FILTER),
                                                    ctypes.byref(fprog), ctypes.c_ulong(0), ctypes.c_ulong(0)) == 0:
        return True  # an older kernel, without seccomp(2): one thread only, so all of them
    return _not_denied("seccomp(SECCOMP_SET_MODE_FILTER)", ctypes.get_errno())


def _not_denied(call: str, error: int) -> bool:
    _log.warning("Query workers keep network access: %s failed (%s); kg's SERVICE filter is their only guard.",
                 call, os.strerror(error) if error else "unknown error")
    return False
