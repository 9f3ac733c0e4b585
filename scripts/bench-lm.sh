#!/usr/bin/env bash
#===- bench-lm.sh - examples/gpt training and generation: txc vs PyTorch ---===#
#
# Usage: scripts/bench-lm.sh [BUILD_DIR] [STEPS] [NEW_TOKENS]
# Compiles examples/gpt/model.tx (-D vocab=1400: B <= 8, T <= 64, d 64, two
# layers) and, in one run on the same machine and thread count
# (TXRT_NUM_THREADS, default 2), measures:
#   - language-model training, tokens/s: the executable's `train --text` on
#     examples/gpt/data/man.txt for STEPS steps (batch 8 x 64 tokens) vs the
#     same model in PyTorch eager (float32, Adam, the same batch shape);
#   - generation, ms per generated token: the executable's `generate` of
#     NEW_TOKENS tokens for 8 prompts decoded together, greedy (the lm_step
#     KV cache when the model has one, else the logits entry re-run over
#     the prefix, as `generate` says), vs PyTorch re-running the prefix.
# The executable's times are its own report (training) and the wall time of
# the process (generation, checkpoint loading included). Prints the CPU and
# the ratios. GPT=path skips the compile and uses that executable.
#
#===------------------------------------------------------------------------===#
set -euo pipefail
BUILD=${1:-build}
STEPS=${2:-100}
NEW=${3:-48}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT="$BUILD/bench-lm"
mkdir -p "$OUT"
THREADS=${TXRT_NUM_THREADS:-2}
# libgomp's spinning waits make a loaded machine many times slower.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
TEXT=examples/gpt/data/man.txt
CPU=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
echo "cpu: $CPU ($(nproc) cores visible), threads $THREADS, OMP_WAIT_POLICY=$OMP_WAIT_POLICY"

GPT=${GPT:-}
if [ -z "$GPT" ]; then
  GPT="$OUT/gpt"
  "$BUILD/bin/txc" examples/gpt/model.tx -D vocab=1400 -o "$GPT"
fi

echo "== txc: train --text, $STEPS steps"
"$GPT" train --text "$TEXT" --min-freq 5 --steps "$STEPS" --seed 1 \
  --threads "$THREADS" --save "$OUT/lm.safetensors" --overwrite --quiet > "$OUT/train.txt"
cat "$OUT/train.txt"
TXC_TRAIN=$(sed -n 's/.*(\([0-9.]*\) tokens\/s).*/\1/p' "$OUT/train.txt")

echo "== txc: generate $NEW tokens for 8 prompts"
printf '%s\n' "the file" "sort lines of text" "remove" "the output" \
  "print the" "if the" "a new" "files are" > "$OUT/prompts.txt"
START=$(date +%s.%N)
"$GPT" generate --load "$OUT/lm.safetensors" --max-new-tokens "$NEW" \
  --threads "$THREADS" < "$OUT/prompts.txt" > "$OUT/generated.txt" 2> "$OUT/generate.err"
END=$(date +%s.%N)
cat "$OUT/generate.err"
TXC_GEN=$(/usr/bin/python3 - "$OUT/prompts.txt" "$OUT/generated.txt" "$START" "$END" <<'PYEOF'
import sys
prompts = [l.split() for l in open(sys.argv[1])]
outputs = [l.split() for l in open(sys.argv[2])]
new = sum(len(o) - len(p) for p, o in zip(prompts, outputs))
print("%.3f" % ((float(sys.argv[4]) - float(sys.argv[3])) * 1000 / max(new, 1)))
PYEOF
)

echo "== PyTorch eager: the same model"
TORCH=$(/usr/bin/python3 - "$THREADS" "$STEPS" "$NEW" <<'PYEOF'
import sys, time
import torch
import torch.nn.functional as F
threads, steps, new = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
torch.set_num_threads(threads)
torch.manual_seed(0)
V, D, L, H, T, B, PAD = 1400, 64, 2, 4, 64, 8, 0

class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1, self.ln_2 = torch.nn.LayerNorm(D), torch.nn.LayerNorm(D)
        self.c_attn, self.c_proj = torch.nn.Linear(D, 3 * D), torch.nn.Linear(D, D)
        self.c_fc, self.mlp_proj = torch.nn.Linear(D, 4 * D), torch.nn.Linear(4 * D, D)
    def forward(self, x, keep):
        b, t, _ = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(D, dim=-1)
        q, k, v = (z.view(b, t, H, D // H).transpose(1, 2) for z in (q, k, v))
        s = (q @ k.transpose(-2, -1) / (D // H) ** 0.5).masked_fill(~keep, -1e9)
        x = x + self.c_proj((s.softmax(-1) @ v).transpose(1, 2).reshape(b, t, D))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))

class GPT(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = torch.nn.Parameter(torch.randn(V, D) * 0.02)
        self.wpe = torch.nn.Parameter(torch.randn(T, D) * 0.01)
        self.h = torch.nn.ModuleList(Block() for _ in range(L))
        self.ln_f = torch.nn.LayerNorm(D)
    def forward(self, ids):
        t = ids.shape[1]
        keep = (ids != PAD)[:, None, None, :] & torch.tril(torch.ones(t, t, dtype=torch.bool))
        x = self.wte[ids] + self.wpe[:t]
        for block in self.h:
            x = block(x, keep)
        return self.ln_f(x) @ self.wte.t()

model = GPT()
opt = torch.optim.Adam(model.parameters(), lr=6e-4, betas=(0.9, 0.95), eps=1e-8)
ids = torch.randint(4, V, (B, T + 1))
def step():
    logits = model(ids[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, V), ids[:, 1:].reshape(-1), ignore_index=PAD)
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
for _ in range(3):
    step()
start = time.perf_counter()
for _ in range(steps):
    step()
train = B * T * steps / (time.perf_counter() - start)
with torch.no_grad():
    prefix = torch.randint(4, V, (B, 3))
    start = time.perf_counter()
    for _ in range(new):
        nxt = model(prefix[:, -T:])[:, -1].argmax(-1, keepdim=True)
        prefix = torch.cat([prefix, nxt], 1)
    gen = (time.perf_counter() - start) * 1000 / (B * new)
print("%.1f %.3f" % (train, gen))
PYEOF
)
TORCH_TRAIN=${TORCH% *}
TORCH_GEN=${TORCH#* }
/usr/bin/python3 - "$TXC_TRAIN" "$TORCH_TRAIN" "$TXC_GEN" "$TORCH_GEN" <<'PYEOF'
import sys
txc_train, torch_train, txc_gen, torch_gen = map(float, sys.argv[1:])
print("training   txc %8.0f tokens/s   PyTorch %8.0f tokens/s   txc / PyTorch %.2fx"
      % (txc_train, torch_train, txc_train / torch_train))
print("generation txc %8.3f ms/token  PyTorch %8.3f ms/token  PyTorch / txc %.2fx (txc faster when > 1)"
      % (txc_gen, torch_gen, torch_gen / txc_gen))
PYEOF
