"""The dataclass code cache: the second process compiles nothing, and its classes behave
exactly as `dataclasses` alone makes them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import DI_CODE

PROGRAM = """
import dataclasses, json, sys
from pathlib import Path
from di_code.cli.dataclass_code import install
cache = install(Path(sys.argv[1]))

@dataclasses.dataclass(frozen=True, slots=True)
class Point:
    x: int
    y: int = 0
    tags: tuple[str, ...] = dataclasses.field(default_factory=tuple)

p = Point(1, tags=("a",))
try:
    p.x = 5
    frozen = False
except dataclasses.FrozenInstanceError:
    frozen = True
print(json.dumps({
    "misses": cache.misses if cache else None,
    "repr": repr(p),
    "equal": p == Point(1, 0, ("a",)),
    "hash": hash(Point(2)) == hash(Point(2)),
    "frozen": frozen,
    "fields": [f.name for f in dataclasses.fields(Point)],
}))
"""


def run(cache: Path, program: str = PROGRAM, **env: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", program, str(cache)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env=os.environ | env,
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


def behaviour(result: dict[str, object]) -> dict[str, object]:
    return {key: value for key, value in result.items() if key != "misses"}


EXPECTED = {
    "repr": "Point(x=1, y=0, tags=('a',))",
    "equal": True,
    "hash": True,
    "frozen": True,
    "fields": ["x", "y", "tags"],
}


def test_the_second_run_compiles_nothing_and_behaves_the_same(tmp_path: Path) -> None:
    cache = tmp_path / "codes.marshal"
    first = run(cache)
    assert cache.is_file() and first["misses"] and behaviour(first) == EXPECTED
    second = run(cache)
    assert second["misses"] == 0 and behaviour(second) == EXPECTED


def test_a_changed_class_compiles_anew(tmp_path: Path) -> None:
    cache = tmp_path / "codes.marshal"
    run(cache)
    changed = run(cache, PROGRAM.replace("y: int = 0", "y: int = 7"))  # the same text
    assert changed["misses"] == 0 and changed["repr"] == "Point(x=1, y=7, tags=('a',))"
    renamed = run(cache, PROGRAM.replace("    y: int = 0", "    z: int = 0"))
    assert renamed["misses"] and renamed["repr"] == "Point(x=1, z=0, tags=('a',))"


@pytest.mark.parametrize("content", [b"", b"not marshal", b"\xe3\x00\x00", None])
def test_a_broken_or_foreign_file_is_only_a_miss(tmp_path: Path, content: bytes | None) -> None:
    cache = tmp_path / "codes.marshal"
    if content is None:  # another interpreter's file
        import marshal

        cache.write_bytes(marshal.dumps(("2.7.0 (other)", {})))
    else:
        cache.write_bytes(content)
    result = run(cache)
    assert result["misses"] and behaviour(result) == EXPECTED
    assert run(cache)["misses"] == 0  # rewritten whole


def test_a_folder_that_cannot_be_written_costs_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "readonly"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("running as a user who can write anywhere")
        assert behaviour(run(folder / "codes.marshal")) == EXPECTED
        assert list(folder.iterdir()) == []
    finally:
        folder.chmod(0o700)


def test_the_command_keeps_its_cache_in_the_users_cache_folder(tmp_path: Path) -> None:
    env = os.environ | {"XDG_CACHE_HOME": str(tmp_path / "cache"), "DI_CODE_HOME": str(tmp_path)}
    done = subprocess.run([DI_CODE, "trust", "--list"], env=env, timeout=60, capture_output=True)
    assert done.returncode == 0
    assert [p.name for p in (tmp_path / "cache" / "di-code").iterdir()] == [
        f"dataclass-code.{sys.implementation.cache_tag}.marshal"
    ]
