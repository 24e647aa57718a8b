"""The environment variables that hold the provider presets' API keys, by preset.

The presets (`models.PRESETS`) read them from here, and `di-code acp` declares them to the
editor (its `authMethods`) from here too, before the model registry is loaded.
"""

from __future__ import annotations

PRESET_KEYS: dict[str, str] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "groq": "GROQ_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "xai": "XAI_API_KEY",
}
"""The local servers' presets (ollama, lmstudio, llamacpp, vllm) need no key."""
