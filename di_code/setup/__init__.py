"""What a command runs with, between the parts (tools, session, config) and the front ends
that drive an agent (the chat's ui, acp, batch): `Prepared`, which the cli's `prepare` makes."""
