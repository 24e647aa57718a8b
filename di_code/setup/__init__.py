"""Making an agent ready to run, between the parts (tools, session, config) and the front ends
that drive it (the chat's ui, acp, batch): `prepare` picks the model and builds the tools,
hooks, MCP and language servers and subagents from the options, the settings and the
environment; `Prepared` is what every front end reads of the result."""
