# Sourced by the benchmark scripts that compare txc with another framework
# in one run (bench-onnx.sh, bench-decode.sh, bench-shapes.sh,
# bench-workload.sh): needs THREADS set; defines RT, the command prefix
# that BENCH_RT=1 sets to real-time priority (chrt -r 10, root) so that a
# busy machine disturbs both sides less, and prints the machine line every
# figure is quoted with (CPU, cores, threads, load, time).
RT=()
[ "${BENCH_RT:-0}" = 1 ] && RT=(chrt -r 10)
CPU=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
echo "cpu: $CPU ($(nproc) cores), threads $THREADS, load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
