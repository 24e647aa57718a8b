"""A todo list of three steps, one of each status, as the todo tool takes it."""

from __future__ import annotations

STEPS = [
    {"content": "read the parser", "status": "done"},
    {"content": "fix the bug", "status": "in_progress"},
    {"content": "add a test", "status": "pending"},
]
