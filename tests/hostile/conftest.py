"""The fixtures the hostile cases share with the rest of the suite (defined there, used here)."""

from tests.cli.conftest import run_di_code, user_hook, workspace  # noqa: F401 (fixtures)
from tests.support.stops import launch  # noqa: F401 (a fixture)
from tests.tools.conftest import outside  # noqa: F401 (a fixture)
