"""Images in `di-code run` prompts, end to end: each provider sends them in its own format, and
a model without image input is refused before any request."""

from __future__ import annotations

import base64
from pathlib import Path

from tests.cli.conftest import RunDiCode
from tests.support.llm_server import LLMServer, Turn

PNG = b"\x89PNG\r\n\x1a\n" + b"\x01" * 16
PNG64 = base64.b64encode(PNG).decode()
JPEG = b"\xff\xd8\xff\xe0" + b"\x02" * 16


def test_image_option_and_at_path_reach_chat_completions_as_data_urls(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    (workspace / "shot.png").write_bytes(PNG)
    (workspace / "photo.jpg").write_bytes(JPEG)
    llm_server.script(Turn(text="A cat."))
    done = run_di_code(
        "run",
        "--no-session",
        "--image",
        "shot.png",
        "and @photo.jpg?",
        env_extra={"DI_CODE_MODEL": "openai/gpt-4.1"},
    )
    assert (done.returncode, done.stdout) == (0, "A cat.\n"), done.stderr
    content = llm_server.requests[-1].body["messages"][-1]["content"]
    jpeg64 = base64.b64encode(JPEG).decode()
    assert content == [
        {"type": "text", "text": "and @photo.jpg?"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG64}"}},
        {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{jpeg64}"}},
    ]


def test_gemini_gets_inline_data_with_its_own_key_header(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    (workspace / "shot.png").write_bytes(PNG)
    llm_server.script(Turn(text="A chart."))
    env = {
        "DI_CODE_MODEL": "gemini/gemini-2.5-flash",
        "GEMINI_API_KEY": "gem-secret-99",
        "GEMINI_BASE_URL": llm_server.anthropic_base_url,
    }
    done = run_di_code("run", "--no-session", "what is @shot.png", env_extra=env)
    assert (done.returncode, done.stdout) == (0, "A chart.\n"), done.stderr
    request = llm_server.requests[-1]
    assert request.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    assert request.headers["x-goog-api-key"] == "gem-secret-99"
    assert request.body["contents"][-1]["parts"] == [
        {"text": "what is @shot.png"},
        {"inlineData": {"mimeType": "image/png", "data": PNG64}},
    ]


def test_a_text_only_model_is_refused_before_any_request(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    (workspace / "shot.png").write_bytes(PNG)
    done = run_di_code("run", "--no-session", "describe @shot.png")
    assert done.returncode == 2
    assert done.stderr == (
        "di-code: openai/test-model does not accept images (1 attached); "
        "use a model with image input\n"
    )
    assert [r for r in llm_server.requests if r.method == "POST"] == []


def test_an_image_option_that_is_not_an_image_is_a_usage_error(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    (workspace / "notes.md").write_text("hi")
    done = run_di_code("run", "--image", "notes.md", "look")
    assert done.returncode == 2
    assert done.stderr == "di-code: --image notes.md: not a png, jpeg, gif or webp image\n"
    assert llm_server.requests == []


def test_a_project_commands_at_path_attaches_nothing_from_outside_the_workspace(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.png").write_bytes(PNG)
    (workspace / "shot.png").write_bytes(PNG)
    (workspace / ".git").mkdir()
    commands = workspace / ".di-code" / "commands"
    commands.mkdir(parents=True)
    template = f"Look at @{outside / 'secret.png'} and @../outside/secret.png, then @shot.png."
    (commands / "look.md").write_text(template)
    llm_server.script(Turn(text="Seen."))
    done = run_di_code(
        "run", "--no-session", "/look", env_extra={"DI_CODE_MODEL": "openai/gpt-4.1"}
    )
    assert (done.returncode, done.stdout) == (0, "Seen.\n"), done.stderr
    content = llm_server.requests[-1].body["messages"][-1]["content"]
    assert content == [
        {
            "type": "text",
            "text": f"Look at {outside / 'secret.png'} and ../outside/secret.png, then @shot.png.",
        },
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG64}"}},
    ]


def test_the_users_own_at_path_in_a_commands_arguments_still_attaches(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, tmp_path: Path
) -> None:
    (tmp_path / "mine.png").write_bytes(PNG)
    commands = workspace / ".di-code" / "commands"
    commands.mkdir(parents=True)
    (commands / "look.md").write_text("Describe $ARGUMENTS")
    llm_server.script(Turn(text="Seen."))
    done = run_di_code(
        "run",
        "--no-session",
        f"/look @{tmp_path / 'mine.png'}",
        env_extra={"DI_CODE_MODEL": "openai/gpt-4.1"},
    )
    assert done.returncode == 0, done.stderr
    content = llm_server.requests[-1].body["messages"][-1]["content"]
    assert content[1] == {
        "type": "image_url",
        "image_url": {"url": f"data:image/png;base64,{PNG64}"},
    }
