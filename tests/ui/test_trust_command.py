"""`/trust` in chat trusts the project's settings file as `di-code trust` does."""

from __future__ import annotations

from pathlib import Path

from di_code.agent import Agent
from di_code.ai.providers.faux import create_faux_provider
from di_code.config.settings import load_settings
from di_code.setup.prepared import Prepared
from tests.support.repl import chat


async def test_slash_trust_records_the_project(tmp_path: Path, di_code_home: Path) -> None:
    (tmp_path / ".git").mkdir()
    config = tmp_path / ".di-code" / "config.toml"
    config.parent.mkdir(mode=0o755)
    config.write_text('[permissions]\nmode = "auto"\n', encoding="utf-8")
    config.chmod(0o644)
    assert load_settings(di_code_home, tmp_path).permission_mode is None
    faux = create_faux_provider([])
    setup = Prepared(Agent(faux.provider, faux.model), workspace=tmp_path)
    async with chat(setup) as session:
        session.type("/trust\r/exit\r")
    said = "".join(session.output.split())  # the console wraps the long line
    assert f"trusted{config}asitisnow;itmayset:permissions.mode" in said
    assert load_settings(di_code_home, tmp_path).permission_mode == "auto"
