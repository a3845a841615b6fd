#!/usr/bin/env bash
# Runs the kernel benchmark (benchmarks/kernels.py) against OpenBLAS: installs
# Debian's libopenblas0-pthread when missing (apt, as scripts/setup.sh does),
# puts its libblas.so.3 first on LD_LIBRARY_PATH for the benchmark's process
# only (numpy and Debian's torch both load libblas.so.3; the system's BLAS
# alternative is left as it is), and unsets OPENBLAS_CORETYPE and
# OPENBLAS_L2_SIZE for that process only, so that OpenBLAS picks its own
# kernels for this CPU. Arguments go to the benchmark (--quick).
# Expects the module built by scripts/setup.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! dpkg-query -W -f='${Status}' libopenblas0-pthread 2>/dev/null | grep -q "install ok installed"; then
  echo "[bench] installing: libopenblas0-pthread"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq libopenblas0-pthread >/dev/null
fi
OPENBLAS_DIR=/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)/openblas-pthread
[ -e "$OPENBLAS_DIR/libblas.so.3" ] || { echo "[bench] no $OPENBLAS_DIR/libblas.so.3" >&2; exit 1; }

echo "[bench] OpenBLAS from $OPENBLAS_DIR; OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset for the benchmark"
exec env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE \
  LD_LIBRARY_PATH="$OPENBLAS_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  PYTHONPATH=python /usr/bin/python3 benchmarks/kernels.py "$@"
