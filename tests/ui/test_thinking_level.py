"""`/thinking` in the REPL: it steps the level round (off after high), sets a named one,
refuses any other word in one line, says when the model is not asked for it, and the bottom
line shows the level."""

from __future__ import annotations

from di_code.agent import Agent
from di_code.ai.providers.faux import create_faux_provider
from di_code.setup.prepared import Prepared
from di_code.ui.footer import bottom_line
from tests.support.repl import chat


async def test_thinking_steps_round_sets_a_level_and_refuses_another_word() -> None:
    faux = create_faux_provider([])
    setup = Prepared(Agent(faux.provider, faux.model, []))
    async with chat(setup) as session:
        session.type("/thinking\r/thinking high\r/thinking\r/thinking lots\r/exit\r")
    not_sent = f" (not sent: {faux.model.id} is not known to think)"
    assert f"Thinking: low{not_sent}\n" in session.output
    assert f"Thinking: high{not_sent}\n" in session.output
    assert f"Thinking: off{not_sent}\n" in session.output
    assert "✗ /thinking takes one of off, low, medium, high.\n" in session.output
    assert setup.agent.options.reasoning == "off"
    setup.agent.options.reasoning = "medium"
    assert bottom_line(setup).endswith(" · thinking: medium")
