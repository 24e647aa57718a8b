"""The terminal chat (`di-code chat`): the prompt, the live view of a turn, approvals, slash
commands and export."""
