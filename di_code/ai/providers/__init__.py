"""Providers: each turns a Context into an AssistantMessageStream (SPEC §2.3)."""
