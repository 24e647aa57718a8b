"""How a tool starts a program: one launcher, the sandbox it chooses, the environment without
the provider keys, the paths kept read-only inside. Below the tools that start programs (bash,
grep, lsp, MCP, hooks) and the permission policy, so each can use it."""
