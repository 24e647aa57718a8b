"""Cut the harness (and so every agent it starts) off from every network but its own loopback.

The agents' settings already point them at 127.0.0.1 and switch their update checks and
telemetry off (agents.py); this makes sure of it. Once the peers are installed, the harness
moves into a network namespace of its own holding only a loopback interface (unshare(2) with
CLONE_NEWNET, then `lo` brought up), before any thread or server starts: its children inherit
it, and a request to any other address fails at once with "Network is unreachable". It needs
root (CAP_SYS_ADMIN); without it the harness says so and goes on with the settings alone.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import socket
import struct

CLONE_NEWNET = 0x40000000
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1
IFREQ = "16sh"


def isolate_network() -> str:
    """Enter a fresh network namespace with loopback up; return what was done, for results."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET) != 0:
        reason = os.strerror(ctypes.get_errno())
        return f"not isolated (unshare: {reason}): agents' own settings only"
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        request = struct.pack(IFREQ, b"lo", 0)
        flags = struct.unpack(IFREQ, fcntl.ioctl(probe, SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(probe, SIOCSIFFLAGS, struct.pack(IFREQ, b"lo", flags | IFF_UP))
    return "isolated: own network namespace, loopback only"
