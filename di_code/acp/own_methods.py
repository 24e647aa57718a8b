"""The ACP v1 method the SDK (0.12.1) has no route for, answered here: `session/delete`.

The SDK answers a method it does not route with "method not found", and its connection takes
no routes of an agent's own. So `stdio.py` hands a `session/delete` request here instead of to
the SDK: once the SDK's agent is made, its params are read with the SDK's own request type, the
agent answers it, and the answer goes out as the SDK writes its own (one JSON line, in one
write, on the same stream). This module imports the SDK only then: `stdio.py` imports it before
`initialize` is answered.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

logger = logging.getLogger(__name__)

DELETE = "session/delete"


def own_request(message: Any) -> dict[str, Any] | None:
    """`message` (a JSON-RPC message, as the line check read it) when it is a request
    answered here."""
    if isinstance(message, dict) and message.get("method") == DELETE and "id" in message:
        return message
    return None


async def answer(
    request: dict[str, Any], made: asyncio.Future[Any], writer: asyncio.StreamWriter
) -> None:
    """Run the request on the agent, once `made`, and write its answer (a result or the
    JSON-RPC error)."""
    agent = await made
    from acp import RequestError  # loaded with the agent
    from acp.schema import DeleteSessionRequest
    from pydantic import ValidationError

    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"]}
    try:
        params = DeleteSessionRequest.model_validate(request.get("params"))
        result = await agent.delete_session(session_id=params.session_id)
        reply["result"] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    except ValidationError as exc:
        fields = [".".join(map(str, error["loc"])) or "params" for error in exc.errors()]
        error = RequestError.invalid_params({"invalid": fields})
        reply["error"] = error.to_error_obj()
    except RequestError as exc:
        reply["error"] = exc.to_error_obj()
    except Exception as exc:  # as the SDK answers its own: never a request left unanswered
        logger.exception("session/delete failed")
        reply["error"] = RequestError.internal_error({"message": str(exc)}).to_error_obj()
    writer.write(json.dumps(reply, separators=(",", ":")).encode() + b"\n")
