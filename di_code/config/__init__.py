"""Settings, models and their providers, trust, and what the user's and the project's files add
to a prompt (context files, skills, custom commands, subagents)."""
