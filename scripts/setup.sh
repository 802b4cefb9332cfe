#!/usr/bin/env bash
# Installs what fusionscope needs on Debian 12 (idempotent), builds it, then optionally launches the
# app or runs the tests.
#
#   scripts/setup.sh            install what is missing and build
#   scripts/setup.sh --launch   ... then open the app (the built-in sample session without a GPU)
#   scripts/setup.sh --test     ... then run every test (GUI tests under Xvfb; GPU tests skip
#                               with a reason when there is no GPU)
#
# Environment: BUILD_DIR (default: build), JOBS (default: all cores).
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
action=${1:-}
case "$action" in "" | --launch | --test) ;; *)
  echo "usage: $0 [--launch|--test]" >&2
  exit 2
  ;;
esac

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }

# The CUDA Toolkit is not a Debian package we install: it must already be there.
find_nvcc() {
  if command -v nvcc >/dev/null 2>&1; then command -v nvcc; return; fi
  for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
    [ -x "$d/nvcc" ] && { echo "$d/nvcc"; return; }
  done
}
NVCC=$(find_nvcc || true)
if [ -z "$NVCC" ]; then
  cat >&2 <<'MSG'
fusionscope needs the NVIDIA CUDA Toolkit (12.x or 13.x: nvcc, cuBLAS, CUPTI), and it was not found
(looked for nvcc on PATH and in /usr/local/cuda*/bin). Install it from NVIDIA's repository for
Debian 12 (https://developer.nvidia.com/cuda-downloads), e.g. `apt-get install cuda-toolkit`,
then run this script again. A GPU is not needed to build, run the tests or view sessions.
MSG
  exit 1
fi
export PATH="$(dirname "$NVCC"):$PATH"

packages=(
  build-essential cmake pkg-config ccache git
  libimgui-dev libglfw3-dev libstb-dev libsqlite3-dev libcli11-dev nlohmann-json3-dev zlib1g-dev libsimdjson-dev libisal-dev
  libgl-dev libgtest-dev libbenchmark-dev
  fonts-dejavu-core
  xvfb xauth xdotool libgl1-mesa-dri
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "Installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

say "Configuring ($BUILD_DIR)"
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_COMPILER="$NVCC" >/dev/null
say "Building with $JOBS jobs"
cmake --build "$BUILD_DIR" -j "$JOBS"

case "$action" in
  --launch)
    say "Launching fusionscope"
    exec "$BUILD_DIR/app/fusionscope"
    ;;
  --test)
    say "Running tests"
    # One X server for the whole run: GUI tests draw real windows on Mesa's software renderer.
    status=0
    xvfb-run -a -s "-screen 0 1920x1080x24" \
      ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" || status=$?
    # ctest marks skipped tests but does not say why; its log of this run holds every test's
    # output, so the GPU tests' own reason is shown once from there.
    reason=$(grep -m1 -o 'needs a CUDA GPU: .*' "$BUILD_DIR/Testing/Temporary/LastTest.log" || true)
    [ -n "$reason" ] && say "The gpu tests were skipped: $reason"
    exit $status
    ;;
esac
