#!/usr/bin/env bash
# Fetches XLA's PJRT CPU plugin (pjrt_c_api_cpu_plugin.so, from the PyPI wheel
# lammps-jax-pjrt-cpu: XLA of jax 0.11.2, a ~60 MB download, ~200 MB unpacked) into a cache
# outside the repository, once, and prints the .so's path:
#
#   LAZY_XLA_PJRT_PLUGIN=$(scripts/fetch_pjrt_cpu_plugin.sh) \
#       cargo test --features pjrt --test pjrt_cpu -- --ignored
#
# The cache is $LAZY_XLA_PJRT_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/lazy-xla/pjrt.
# Needs pip (python3 -m pip) and unzip (or python3's zipfile). Progress goes to stderr.
set -euo pipefail
cache="${LAZY_XLA_PJRT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lazy-xla/pjrt}"
package="lammps-jax-pjrt-cpu"
version="0.11.2"
plugin="$cache/$package-$version/pjrt_c_api_cpu_plugin.so"
if [ ! -s "$plugin" ]; then
  mkdir -p "$cache"
  python3 -m pip download "$package==$version" --no-deps --only-binary=:all: -d "$cache" >&2
  wheel=$(ls "$cache"/lammps_jax_pjrt_cpu-"$version"-*.whl | head -n 1)
  tmp="$cache/unpack.$$"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  if command -v unzip >/dev/null; then
    unzip -q -o "$wheel" '*/pjrt_c_api_cpu_plugin.so' -d "$tmp" >&2
  else
    python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$wheel" "$tmp"
  fi
  found=$(find "$tmp" -name pjrt_c_api_cpu_plugin.so | head -n 1)
  [ -n "$found" ] || { echo "fetch_pjrt_cpu_plugin: no pjrt_c_api_cpu_plugin.so in $wheel" >&2; exit 1; }
  mkdir -p "$(dirname "$plugin")"
  mv "$found" "$plugin"
  rm -rf "$tmp"
fi
echo "$plugin"
