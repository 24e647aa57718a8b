"""The permission policy: rules, shell parsing, grants, the sandbox, user hooks."""
