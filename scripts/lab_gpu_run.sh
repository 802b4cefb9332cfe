#!/bin/bash
# The live lab on a GPU server without a display: its GPU tests, then the app's Lab panel run
# headless (rendered through EGL by the GPU's driver) on the post's GeGLU in every variant and on
# a hidden-size sweep, pictures taken half-way and after; the session, pictures and log go to OUT.
#
#   scripts/lab_gpu_run.sh DIR OUT
#
# DIR holds what the server lacks, built and gathered on a development machine:
#   bin.tar.xz   fusionscope and lab_gpu_tests (stripped)
#   lib/         libglfw.so.3; glvnd's libEGL.so.1, libGL.so.1, libGLX.so.0, libOpenGL.so.0,
#                libGLdispatch.so.0; libX11.so.6, libxcb.so.1, libXau.so.6, libXdmcp.so.6,
#                libbsd.so.0, libmd.so.0; libcupti.so.13
#   fonts/       DejaVuSans.ttf
# The server provides the NVIDIA driver (libEGL_nvidia and its glvnd vendor file) and the CUDA
# Toolkit's cuBLASLt. docs/lab.md shows what one run measured on an H100.
set -u
D=$(cd "${1:?usage: lab_gpu_run.sh DIR OUT}" && pwd)
O=${2:?usage: lab_gpu_run.sh DIR OUT}
W=$(mktemp -d)
mkdir -p "$O"
tar -xJf "$D/bin.tar.xz" -C "$W"
NVEGL=$(ls /usr/lib/x86_64-linux-gnu/libEGL_nvidia.so.0 /usr/local/nvidia/lib64/libEGL_nvidia.so.0 \
  /usr/lib64/libEGL_nvidia.so.0 2>/dev/null | head -1)
export LD_LIBRARY_PATH=$D/lib:/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64${NVEGL:+:$(dirname "$NVEGL")}
for f in /usr/share/glvnd/egl_vendor.d/10_nvidia.json /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json \
  /etc/glvnd/egl_vendor.d/10_nvidia.json; do
  if [ -f "$f" ]; then export __EGL_VENDOR_LIBRARY_FILENAMES=$f; break; fi
done
export FUSIONSCOPE_FONT=$D/fonts/DejaVuSans.ttf
export FUSIONSCOPE_SCRATCH_DIR=$W/tests  # the tests' sessions, kept below
unset DISPLAY WAYLAND_DISPLAY
cd "$W"
TIMEFORMAT="wall %R s"
{
  echo "== machine"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  echo "EGL vendor: ${__EGL_VENDOR_LIBRARY_FILENAMES:-none}, libEGL_nvidia: ${NVEGL:-none}"
  ldd ./fusionscope | grep "not found"
  echo "== GPU tests of the live lab"
  timeout 75 ./lab_gpu_tests --gtest_filter='LabLiveGpu.*'
  echo "rc=$?"
  echo "== Lab panel, headless: geglu-post in every variant"
  time timeout 45 ./fusionscope screenshot "$W/lab.fsdb" --lab geglu-post \
    --lab-during "$O/lab_during.png" --out "$O/lab_after.png" --size 1600x1000
  echo "rc=$?"
  echo "== Lab panel, headless: sweep hidden 256 -> 8192"
  time timeout 75 ./fusionscope screenshot "$W/lab.fsdb" --lab geglu-post \
    --lab-variants eager,epilogue,pointwise-fused,gated-gemm --lab-sweep hidden:256:8192 \
    --lab-during "$O/sweep_during.png" --out "$O/sweep_after.png" --size 1600x1000
  echo "rc=$?"
  if [ ! -f "$O/lab_after.png" ]; then
    echo "== no picture: the post's GeGLU captured without the panel instead"
    rm -f "$W/lab.fsdb"
    timeout 40 ./fusionscope capture --preset geglu-post --out "$W/lab.fsdb" --verify
    echo "rc=$?"
  fi
  ./fusionscope report "$W/lab.fsdb" --top 2
} > "$O/log.txt" 2>&1
cp "$W/lab.fsdb" "$O/lab.fsdb" 2>/dev/null
(cd "$W/tests" 2>/dev/null && tar -czf "$O/test_sessions.tgz" LabLiveGpu.*)
tail -c 6000 "$O/log.txt"
