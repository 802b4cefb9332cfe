#!/usr/bin/env bash
# Installs what fusionscope needs on Debian 12 (idempotent), builds it, then optionally launches the
# app or runs the tests.
#
#   scripts/setup.sh            install what is missing and build
#   scripts/setup.sh --launch   ... then open the app (the built-in sample session without a GPU)
#   scripts/setup.sh --test     ... then run every test (GUI tests under Xvfb; GPU tests skip
#                               with a reason when there is no GPU)
#   scripts/setup.sh --deps     install what is missing, nothing else
#
# Environment: BUILD_DIR (default: build), JOBS (default: all cores), CMAKE_ARGS (more configure
# arguments, e.g. -DFUSIONSCOPE_WERROR=ON), FUSIONSCOPE_CUDA=OFF (build the viewer alone, without
# the CUDA Toolkit; chosen by itself when no toolkit is found).
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
FUSIONSCOPE_CUDA=${FUSIONSCOPE_CUDA:-}
action=${1:-}
case "$action" in "" | --launch | --test | --deps) ;; *)
  echo "usage: $0 [--launch|--test|--deps]" >&2
  exit 2
  ;;
esac

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }

packages=(
  build-essential cmake pkg-config ccache git
  libimgui-dev libglfw3-dev libstb-dev libsqlite3-dev libcli11-dev nlohmann-json3-dev zlib1g-dev
  libsimdjson-dev libisal-dev
  libgl-dev libgtest-dev libbenchmark-dev
  fonts-dejavu-core
  xvfb xauth xdotool libgl1-mesa-dri
  clang-format python3
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
[ "$action" = --deps ] && exit 0

# The CUDA Toolkit is not a Debian package we install: without it, the viewer is built alone.
find_nvcc() {
  if command -v nvcc >/dev/null 2>&1; then command -v nvcc; return; fi
  for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
    [ -x "$d/nvcc" ] && { echo "$d/nvcc"; return; }
  done
}
configure=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
if [ "$FUSIONSCOPE_CUDA" = OFF ]; then
  configure+=(-DFUSIONSCOPE_CUDA=OFF)
elif NVCC=$(find_nvcc) && [ -n "$NVCC" ]; then
  export PATH="$(dirname "$NVCC"):$PATH"
  configure+=(-DFUSIONSCOPE_CUDA=ON -DCMAKE_CUDA_COMPILER="$NVCC")
else
  cat >&2 <<'MSG'
The NVIDIA CUDA Toolkit (12.x or 13.x: nvcc, cuBLAS, CUPTI) was not found (looked for nvcc on PATH
and in /usr/local/cuda*/bin): building the viewer alone, which opens, imports, exports, reports
and draws sessions. To capture and run kernels, install the toolkit from NVIDIA's repository for
Debian 12 (https://developer.nvidia.com/cuda-downloads), e.g. `apt-get install cuda-toolkit`, and
run this script again. A GPU is not needed to build, run the tests or view sessions.
MSG
  configure+=(-DFUSIONSCOPE_CUDA=OFF)
fi
# shellcheck disable=SC2206  # CMAKE_ARGS is a list of arguments, split on spaces
configure+=(${CMAKE_ARGS:-})

say "Configuring ($BUILD_DIR)"
cmake -S . -B "$BUILD_DIR" "${configure[@]}" >/dev/null
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
