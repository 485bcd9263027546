#!/usr/bin/env bash
# Installs what durin needs on a Debian or Ubuntu machine, if it is missing, and sets up the
# environment. Sourced by the other scripts; safe to run again (it only installs what is
# missing).
#
#   - a Rust toolchain (cargo), through rustup if there is none;
#   - LLVM 19 development files (llvm-19-dev, libpolly-19-dev, libzstd-dev) and g++ (for
#     the tests of C++ programs linked with durin's code) from apt;
#   - NVRTC 13.0 (pip package nvidia-cuda-nvrtc) into .deps/python, not the system Python.
set -euo pipefail

DURIN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export DURIN_ROOT

say() { printf 'setup: %s\n' "$*" >&2; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        say "need root (or sudo) to run: $*"
        return 1
    fi
}

# Rust.
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v cargo >/dev/null 2>&1; then
    say "installing Rust through rustup"
    command -v curl >/dev/null 2>&1 || as_root apt-get install -y curl
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
    export PATH="$HOME/.cargo/bin:$PATH"
fi

# LLVM 19 and friends.
missing=()
for pkg in llvm-19-dev libpolly-19-dev libzstd-dev g++; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]} (apt)"
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}" >/dev/null
fi
export LLVM_SYS_191_PREFIX="${LLVM_SYS_191_PREFIX:-/usr/lib/llvm-19}"

# NVRTC, project-local.
nvrtc_dir="$DURIN_ROOT/.deps/python/nvidia/cu13/lib"
if [ ! -e "$nvrtc_dir/libnvrtc.so.13" ]; then
    say "installing NVRTC 13.0 into .deps/python (pip)"
    python3 -m pip install --quiet --disable-pip-version-check --no-deps \
        --target "$DURIN_ROOT/.deps/python" nvidia-cuda-nvrtc==13.0.88
fi
export LD_LIBRARY_PATH="$nvrtc_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
