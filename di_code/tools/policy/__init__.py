"""The permission policy: modes, rules, shell parsing, grants, user hooks."""
