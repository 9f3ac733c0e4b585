# Sourced by scripts/gpu-check.sh and scripts/bench-gpu.sh.
#
# GPU_BORROWED_TXC: where `gpu-check.sh pack` puts the txc GPU_CHECK_TXC
# names, in the pack's build dir (bench-gpu.sh pack compiles with it too).
GPU_BORROWED_TXC=bin/txc-borrowed
#
# budget CAP: CAP seconds, or fewer when GPU_DEADLINE (seconds since the
# epoch) comes sooner: the stages of one device call share its time limit.
# 1 when the deadline is less than 10 s away (the stage is cut at once).
budget() {
  local cap=$1 left
  if [[ -n "${GPU_DEADLINE:-}" ]]; then
    left=$((GPU_DEADLINE - $(date +%s)))
    ((left < cap)) && cap=$left
    ((cap < 10)) && cap=1
  fi
  echo "$cap"
}
