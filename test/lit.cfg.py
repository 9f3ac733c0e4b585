# -*- Python -*-
# lit configuration for txc: IR tests (Dialect/, Transforms/), spec tests
# (Frontend/, Examples/). Tools come from the build's bin/ and LLVM's.
import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "TXC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".tx", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "README.md", "lit.cfg.py",
                   "lit.site.cfg.py", "unit", "utils", "fuzz"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.txc_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%txc_src", config.txc_src_root))
config.substitutions.append(("%txc_obj", config.txc_obj_root))
config.substitutions.append(("%examples", os.path.join(config.txc_src_root, "examples")))
config.substitutions.append(("%python", config.python_executable))
# The C++ compiler that links programs with libtxrt: `c++`, or in a
# sanitizer build (-DTXC_SANITIZE=...) the compiler that built libtxrt with
# its -fsanitize flags, which link the sanitizer runtime its code needs.
config.substitutions.append(
    ("%txrt-cxx", (config.txc_link_compiler + " " + config.txc_sanitize_flags).strip()))
config.substitutions.append(("%golden", os.path.join(config.txc_src_root, "test", "golden", "data")))

# End-to-end tests need libtxrt and the executable driver (TXC_BUILD_RUNTIME).
if os.path.exists(os.path.join(config.txc_obj_root, "lib", "libtxrt_driver.a")):
    config.available_features.add("runtime")
# The sanitizers reserve terabytes of shadow address space: no test under
# an address-space limit (`ulimit -v`) runs in such a build.
if config.txc_sanitize:
    config.available_features.add("sanitizers")
# Tests of what only root can set up (another user's file, chattr +i):
# root with setpriv (util-linux) and chattr (e2fsprogs).
import shutil
if os.geteuid() == 0 and shutil.which("setpriv") and shutil.which("chattr"):
    config.available_features.add("root")
# SentencePiece's own tools (Debian sentencepiece): models users train.
if shutil.which("spm_train"):
    config.available_features.add("spm-tools")
# txc --emit=svg renders with Graphviz's dot (Debian graphviz).
if shutil.which("dot"):
    config.available_features.add("graphviz")
config.substitutions.append(
    ("%check-dot", config.python_executable + " " +
     os.path.join(config.txc_src_root, "test", "utils", "check-dot.py")))
config.substitutions.append(
    ("%expect-exit", config.python_executable + " " +
     os.path.join(config.txc_src_root, "test", "utils", "expect-exit.py")))

# examples/enes/make-corpus.sh needs WordNet (wordnet-base) and Apertium's
# eng-spa pair (apertium-eng-spa).
if shutil.which("apertium") and os.path.exists("/usr/share/wordnet/data.noun"):
    try:
        pairs = subprocess.run(["apertium", "-l"], capture_output=True,
                               text=True, timeout=60).stdout.split()
    except Exception:
        pairs = []
    if "eng-spa" in pairs:
        config.available_features.add("apertium-eng-spa")

# A build with the CUDA toolkit (TXC_CUDA): the CUDA backend and txc's CUDA
# target are built.
if config.txc_cuda == "ON":
    config.available_features.add("cuda")

# A build with MPI (TXC_MPI) and Open MPI's mpirun: the data-parallel tests
# run 2 ranks on this machine over shared memory (docs/distributed.md).
if config.txc_mpi == "ON" and shutil.which("mpirun"):
    config.available_features.add("mpi")
    # Under the sanitizers (scripts/check-sanitize.sh), the ranks' leak
    # check is off: Open MPI leaves ~120 KB in ~3300 blocks at exit, in MCA
    # components it has unloaded (their frames are "<unknown module>", which
    # no suppression can name). The driver code the ranks run is leak-checked
    # by the single-process tests; ASan's other checks stay on here.
    # Set for mpirun, which the ranks of every app context inherit (an `-x`
    # reached only the first context of `mpirun -np 1 A : -np 1 B`).
    ranks_env = ""
    if config.txc_sanitize_flags and "ASAN_OPTIONS" in os.environ:
        ranks_env = "env ASAN_OPTIONS=%s:detect_leaks=0 " % (
            os.environ["ASAN_OPTIONS"])
    config.substitutions.append(
        ("%mpirun", ranks_env + "mpirun --oversubscribe --allow-run-as-root "
         "--mca btl self,vader --mca pml ob1 -x TXRT_NUM_THREADS=1"))

# Executables compiled with --precision=bf16 run only on CPUs with
# AVX512_BF16 or AMX_BF16 (runtime/lib/kernels/Bf16.cpp checks the same).
try:
    with open("/proc/cpuinfo") as cpuinfo:
        cpu_flags = set(cpuinfo.read().split())
except OSError:
    cpu_flags = set()
if cpu_flags & {"avx512_bf16", "amx_bf16"}:
    config.available_features.add("bf16-cpu")
else:
    lit_config.note("no avx512_bf16/amx_bf16: tests that need bf16 are skipped")

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.txc_tools_dir, config.llvm_tools_dir]
tools = ["txc", "tx-opt"]
if "runtime" in config.available_features:
    tools.append("txrt-matmul-limit")
llvm_config.add_tool_substitutions(tools, tool_dirs)

# Tests that compare against PyTorch need Debian's python3-torch.
try:
    subprocess.run([config.python_executable, "-c", "import torch"],
                   check=True, capture_output=True, timeout=120)
    config.available_features.add("torch")
except Exception:
    lit_config.note("torch not importable: tests that need PyTorch are skipped")
