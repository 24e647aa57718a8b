"""A new user's first run: with no model the message names every key variable and
`--base-url`; `--base-url` alone uses the first model that server lists, and says so."""

from __future__ import annotations

from di_code.config.models import PRESETS
from tests.cli.conftest import RunDiCode
from tests.support.llm_server import LLMServer, Turn


def test_no_model_names_every_key_variable_and_base_url(run_di_code: RunDiCode) -> None:
    done = run_di_code("run", "hi", server=False)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    keys = {preset.api_key_env for preset in PRESETS.values() if preset.api_key_env}
    assert "GEMINI_API_KEY" in keys
    for key in keys:
        assert key in done.stderr
    assert "--base-url URL" in done.stderr and "--model PROVIDER/ID" in done.stderr


def test_base_url_alone_uses_the_servers_first_model_and_says_so(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    llm_server.script(Turn(text="hello from the server"))
    url = llm_server.openai_base_url
    done = run_di_code("run", "--base-url", url, "hi", server=False)
    assert (done.returncode, done.stdout) == (0, "hello from the server\n"), done.stderr
    assert f"using test-model, the first model {url} lists" in done.stderr
    posts = [r for r in llm_server.requests if r.method == "POST"]
    assert posts[-1].body["model"] == "test-model"
    assert any(r.method == "GET" and r.path == "/v1/models" for r in llm_server.requests)


def test_base_url_of_a_server_that_lists_nothing_is_one_line(run_di_code: RunDiCode) -> None:
    done = run_di_code("run", "--base-url", "http://127.0.0.1:9/v1", "hi", server=False)
    assert done.returncode == 2
    assert done.stderr == (
        "di-code: no model listed at http://127.0.0.1:9/v1/models: "
        "pass --model ID with --base-url\n"
    )


def test_a_named_provider_at_your_base_url_needs_no_key(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    llm_server.script(Turn(text="no key needed"))
    url = llm_server.openai_base_url
    args = ("run", "--provider", "openai", "--model", "test-model", "--base-url", url, "hi")
    done = run_di_code(*args, server=False)
    assert (done.returncode, done.stdout) == (0, "no key needed\n"), done.stderr
    [post] = [r for r in llm_server.requests if r.method == "POST"]
    assert "authorization" not in {name.lower() for name in post.headers}


def test_a_named_provider_at_its_own_url_still_needs_its_key(run_di_code: RunDiCode) -> None:
    done = run_di_code("run", "--provider", "openai", "--model", "gpt-4o", "hi", server=False)
    assert done.returncode == 2
    assert done.stderr == "di-code: no API key for openai: set OPENAI_API_KEY (or pass --api-key)\n"
