"""Before a task's process starts: does this machine have the key of the task's model?

Without it every task for that provider fails the same way, one after the other (on Ray, the
nodes' environment gives the key, not the driver's, which is where the user set it). So the
task's model is chosen as its `di-code run` will choose it (same flags, same environment, same
settings, through the provider factory), and a missing key is KeyMissing: the batch stops
at the first one with one message that says where and what to do.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from di_code.system.errors import DiCodeError


class KeyMissing(DiCodeError):
    """No key for `provider` here (on `node`, when the task ran on a Ray node)."""

    exit_code = 2

    def __init__(self, provider: str, variable: str, node: str | None = None) -> None:
        super().__init__(provider, variable, node)  # args: Ray pickles it back to the driver
        self.provider, self.variable, self.node = provider, variable, node

    def __str__(self) -> str:
        if self.node is None:
            return f"no API key for {self.provider}: set {self.variable}"
        return (
            f"node {self.node} has no API key for {self.provider}: set {self.variable} in the "
            f"environment its Ray runs in (where `ray start` ran), or pass --ray-env "
            f"{self.variable} to forward yours (Ray then keeps it in its control store)"
        )


ModelFlags = tuple[str | None, str | None, str | None]
"""A task's `--model`, `--provider` and `--base-url`."""


def check_key(flags: ModelFlags, cwd: Path, env: Mapping[str, str]) -> None:
    """KeyMissing when a `run` with these flags in `cwd` with `env` would have no key for its
    model; any other problem with the model is the task's own, and its run says it. The key
    found is registered as a secret (di_code.ai.redaction)."""
    from di_code.ai.redaction import register, register_url
    from di_code.config.provider_factory import ProviderFactory
    from di_code.config.selection import MissingKey, ModelRequest
    from di_code.config.settings import ConfigError, di_code_home, load_settings

    try:
        settings = load_settings(di_code_home(env), cwd, env)
        selection = ProviderFactory(settings, env, notify=lambda _line: None).pick(
            ModelRequest(*flags)
        )
    except MissingKey as exc:
        raise KeyMissing(exc.provider, exc.variable) from None
    except ConfigError:
        return
    if selection is not None:  # the driver writes the task's results: it hides its key too
        register(selection.api_key)
        register_url(selection.model.base_url)
