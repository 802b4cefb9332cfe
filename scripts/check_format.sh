#!/usr/bin/env bash
# Fails when a tracked C++ or CUDA file differs from what clang-format 14 makes of it (.clang-format),
# and lists those files. `clang-format -i FILE` fixes one.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! version=$(clang-format --version 2>/dev/null); then
  echo "check_format: clang-format is not installed (scripts/setup.sh --deps installs it)" >&2
  exit 1
fi
case "$version" in *"version 14."*) ;; *)
  echo "check_format: needs clang-format 14 (Debian 12's), found: $version" >&2
  exit 1
  ;;
esac
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.cu' '*.cuh')
bad=()
for f in "${files[@]}"; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "check_format: ${#bad[@]} file(s) differ from clang-format 14 (clang-format -i FILE):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "check_format: ${#files[@]} files formatted"
