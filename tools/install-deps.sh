#!/usr/bin/env bash
# Installs every build and test dependency of llmx from Debian's packages, by name.
# (ripgrep: the grep_files tool runs `rg`, DECISIONS E9; tmux: a test looks at exec on a terminal;
# openssl: the TLS test between a front and a node makes its certificates.)
# Idempotent: packages already present are not fetched again. Extra package names may be given.
set -euo pipefail
pkgs=(build-essential cmake ninja-build ccache pkg-config git
      libcaf-dev libsimdjson-dev libfmt-dev doctest-dev libcurl4-openssl-dev
      libtomlplusplus-dev libcli11-dev libcpp-httplib-dev libseccomp-dev libssl-dev
      libboost-dev nodejs npm ripgrep tmux openssl)
# Callers may ask for more (tools/build.sh --sanitize: clang, its sanitizer runtimes, llvm).
pkgs+=("$@")
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" && continue
  # A NodeSource nodejs bundles npm and conflicts with Debian's npm package.
  [ "$p" = npm ] && command -v npm >/dev/null 2>&1 && continue
  missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  echo "install-deps: installing ${missing[*]}" >&2
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
