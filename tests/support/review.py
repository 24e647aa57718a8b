"""The file of the review tests' first commit, and the first request a review sent the model."""

from __future__ import annotations

from tests.cli.conftest import request_text
from tests.support.llm_server import LLMServer

FIRST = "def div(a, b):\n    return a / b\n"


def first_request(server: LLMServer) -> str:
    return request_text(next(r for r in server.requests if r.method == "POST").body)
