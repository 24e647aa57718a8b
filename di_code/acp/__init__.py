"""di-code as an Agent Client Protocol agent (`di-code acp`): an editor drives it over stdio.

A front end at the level of `ui`: it turns an editor's requests into prompts for the same
Agent the chat uses, and the agent's events into ACP session updates. It imports the ACP SDK,
so nothing else in di-code imports it: only `di-code acp` pays for it.
"""
