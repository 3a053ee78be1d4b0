#!/usr/bin/env bash
# One short device check of TTRA on a GPU (issue 33), about 10 minutes on an H100, every figure into
# $OUT (the device tool brings that folder back):
#   1. the environment: nvidia-smi, torch's CUDA, the libraries' versions;
#   2. benchmarks/ttra_gpu.py at its default sizes (16 layers, width 1024; 16 questions x 8 samples
#      x 256 tokens) with transformers' generate: the evaluation at default options against one
#      generate of the same 128 sequences (target: evaluation_time_over_floor <= 1.25), and the GRPO
#      step time;
#   3. the same with the old fixed --eval-batch-questions 4, the figure the issue measured (4.7x);
#   4. where vLLM imports: the same with --eval-engine vllm (rollouts and evaluation on vLLM);
#   5. one small TTRA run through the command line on the GPU with a preset (GPU-seconds > 0 in
#      results.json, the engines named).
# Each step has its own timeout, so a slow one cannot eat the others' time.
#
# The machine has no network. Python packages the image lacks come from a wheel folder carried in
# (WHEELS, default shared/wheels; prepare it on a networked machine with the device's Python, e.g.
#   pip download -d shared/wheels -r requirements/lock-gpu.txt --only-binary :all:
# leaving out torch and the nvidia-* wheels when the image has a CUDA torch already). The script
# installs only what does not import, into a virtual environment that sees the image's packages.
#
#   OUT=/tmp/ttra-gpu benchmarks/ttra_gpu_device.sh
# SMALL=1 runs the CPU-sized benchmark instead (a check of this script anywhere); NO_VENV=1 uses
# $PYTHON as it is (e.g. PYTHON=.venv/bin/python where the project is installed).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/ttra-gpu}
WHEELS=${WHEELS:-shared/wheels}
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT"
log() { echo "[$(date +%T)] $*" | tee -a "$OUT/steps.log"; }

log "1. environment"
nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1 || log "nvidia-smi failed"
VENV=/tmp/ttra-gpu-venv
SIZE=()
[ "${SMALL:-}" = 1 ] && SIZE=(--small)
[ "${NO_VENV:-}" = 1 ] && VENV=""
if [ -n "$VENV" ] && [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv --system-site-packages "$VENV" || { log "no venv"; VENV=""; }
fi
PY=${VENV:+$VENV/bin/python}
PY=${PY:-$PYTHON}
missing=$("$PY" - <<'EOF'
import importlib.util
need = {"torch": "torch", "transformers": "transformers", "trl": "trl", "datasets": "datasets",
        "accelerate": "accelerate", "math_verify": "math-verify", "scipy": "scipy",
        "django": "django", "celery": "celery", "tqdm": "tqdm", "tokenizers": "tokenizers",
        "pandas": "pandas", "psycopg": "psycopg[binary,pool]", "dj_database_url": "dj-database-url",
        "channels": "channels", "redis": "redis", "django_htmx": "django-htmx",
        "sentry_sdk": "sentry-sdk", "openai": "openai", "anthropic": "anthropic"}
print(" ".join(pkg for mod, pkg in need.items() if importlib.util.find_spec(mod) is None))
EOF
)
if [ -n "$missing" ]; then
  if [ -d "$WHEELS" ]; then
    log "installing from $WHEELS: $missing"
    # shellcheck disable=SC2086
    "$PY" -m pip install -q --no-index --find-links "$WHEELS" $missing >>"$OUT/pip.log" 2>&1 \
      || log "pip install failed (see pip.log)"
  else
    log "missing and no wheel folder $WHEELS: $missing"
  fi
fi
"$PY" - >"$OUT/environment.json" 2>&1 <<'EOF'
import importlib, json
found = {}
for name in ("torch", "transformers", "trl", "accelerate", "datasets", "vllm"):
    try:
        found[name] = importlib.import_module(name).__version__
    except Exception as err:  # noqa: BLE001
        found[name] = f"missing: {err.__class__.__name__}"
import torch
found["cuda"] = torch.cuda.is_available()
found["device"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
print(json.dumps(found, indent=2))
EOF
cat "$OUT/environment.json"
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false

log "2. benchmark, default options, transformers generate"
timeout 200 "$PY" benchmarks/ttra_gpu.py "${SIZE[@]}" --eval-engine hf --out "$OUT/hf-auto.json" \
  >"$OUT/hf-auto.log" 2>&1 || log "step 2 failed or timed out (hf-auto.log)"

log "3. benchmark, the old --eval-batch-questions 4"
timeout 120 "$PY" benchmarks/ttra_gpu.py "${SIZE[@]}" --eval-engine hf --eval-batch-questions 4 --steps 1 \
  --out "$OUT/hf-batch4.json" >"$OUT/hf-batch4.log" 2>&1 || log "step 3 failed (hf-batch4.log)"

if "$PY" -c "import vllm" 2>/dev/null; then
  log "4. benchmark with vLLM"
  timeout 200 "$PY" benchmarks/ttra_gpu.py "${SIZE[@]}" --eval-engine vllm --steps 2 --out "$OUT/vllm.json" \
    >"$OUT/vllm.log" 2>&1 || log "step 4 failed or timed out (vllm.log)"
else
  log "4. skipped: vllm does not import"
fi

log "5. a small TTRA run on the GPU through the command line"
timeout 120 "$PY" - >"$OUT/pipeline.log" 2>&1 <<'EOF'
import json, pathlib, subprocess, sys, tempfile
from studyapp.pipelines.ttra.tiny import build_tiny_model
work = pathlib.Path(tempfile.mkdtemp())
import torch
model = build_tiny_model(work / "model", hidden_size=256, layers=4, heads=4, kv_heads=4,
                         dtype="bfloat16" if torch.cuda.is_available() else None)
tasks = work / "tasks.jsonl"
tasks.write_text("".join(json.dumps({"id": f"q{i}", "question": f"What is {i} + 1?",
                                     "answer": str(i + 1)}) + "\n" for i in range(9)))
out = work / "out"
code = subprocess.call([sys.executable, "-m", "studyapp.pipelines.ttra", "--model", str(model),
    "--tasks", str(tasks), "--out", str(out), "--preset", "a1-gsm8k", "--one-shot-id", "q0",
    "--one-shot-steps", "2", "--ttrl-steps", "2", "--num-generations", "8",
    "--max-completion-length", "64", "--eval-max-completion-length", "64", "--eval-samples", "8",
    "--quiet", "--no-save-model"])
results = json.loads((out / "results.json").read_text())
print(json.dumps({"exit": code, "engines": results["engines"], "times": results["times"],
                  "cost_table": results["cost_table"],
                  "eval_batch_questions": results["options"]["eval_batch_questions"]}, indent=2))
EOF
cp "$OUT/pipeline.log" "$OUT/pipeline.json" 2>/dev/null || true
log "done"
for f in hf-auto hf-batch4 vllm; do
  [ -f "$OUT/$f.json" ] && "$PY" -c "import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], r['evaluation']['tokens_per_s'], 'tok/s eval vs', r['floor_one_generate']['tokens_per_s'], 'floor; time over floor', r['evaluation_time_over_floor'], '; GRPO step', r['grpo']['step_s_median_after_first'], 's')" "$OUT/$f.json" "$f" | tee -a "$OUT/steps.log"
done
exit 0
