"""The tests of permission faults (an unreadable file, a read-only one) need a process the
file modes bind: root with its capabilities reads and writes anything. Such a test is marked
`needs_permission_faults`; where the modes do not bind it is skipped with the reason. CI runs
as root, so .ci/run runs these tests again as root without capabilities (setpriv), where the
modes do bind, with PERMISSION_PASS set: in that pass a test that cannot run fails."""

from __future__ import annotations

import functools
import os
import tempfile

import pytest

needs_permission_faults = pytest.mark.needs_permission_faults
PERMISSION_PASS = "DI_CODE_PERMISSION_PASS"


@functools.cache
def modes_bind() -> bool:
    """True when this process is refused a file of mode 000 (it is not root with
    CAP_DAC_OVERRIDE): tried on a real file, not read off the user id."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "locked")
        with open(path, "w") as made:
            made.write("x")
        os.chmod(path, 0)
        try:
            with open(path):
                return False
        except PermissionError:
            return True


def require_permission_faults() -> None:
    """Return when file modes bind here; else skip, or fail in .ci/run's permission pass."""
    if modes_bind():
        return
    reason = "file modes do not bind this process (root reads and writes any file)"
    if os.environ.get(PERMISSION_PASS) == "1":
        pytest.fail(f"the permission pass cannot run this test: {reason}", pytrace=False)
    pytest.skip(reason)
