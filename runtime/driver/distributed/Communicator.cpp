//===- Communicator.cpp - MPI when built with it, one process otherwise ---===//
#include "distributed/Communicator.h"
#include "core/Error.h"

#include <cstdlib>
#include <initializer_list>
#include <string>

#ifdef TXC_HAVE_MPI
// The C API only: no MPI C++ bindings (libmpi_cxx) to link.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace txrt::driver {

namespace {

/// Whether an MPI launcher (Open MPI's mpirun, or a PMI/PMIx one such as
/// MPICH's or Slurm's) started this process.
bool launchedByMpi() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (std::getenv(name))
      return true;
  return false;
}

/// How many processes the launcher started (0: not known).
int launchedCopies() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char *value = std::getenv(name))
      return std::atoi(value);
  return 0;
}

#ifdef TXC_HAVE_MPI

int32_t allreduceStart(void *, float *data, int64_t n, void **out_request) {
  auto *request = new MPI_Request;
  // Counts are int: a bucket (megabytes) is far below 2^31 floats.
  int status = MPI_Iallreduce(MPI_IN_PLACE, data, int(n), MPI_FLOAT, MPI_SUM,
                              MPI_COMM_WORLD, request);
  if (status != MPI_SUCCESS) {
    delete request;
    return status;
  }
  *out_request = request;
  return 0;
}

int32_t allreduceTest(void *, void *request, int32_t *out_done) {
  int flag = 0;
  // A completed request becomes MPI_REQUEST_NULL and waiting on it returns
  // at once: it stays with the runtime until then (*out_done = 0), so that
  // allreduceWait frees it.
  int status = MPI_Test(static_cast<MPI_Request *>(request), &flag,
                        MPI_STATUS_IGNORE);
  *out_done = 0;
  return status == MPI_SUCCESS ? 0 : status;
}

int32_t allreduceWait(void *, void *request) {
  auto *mpiRequest = static_cast<MPI_Request *>(request);
  int status = MPI_Wait(mpiRequest, MPI_STATUS_IGNORE);
  delete mpiRequest;
  return status == MPI_SUCCESS ? 0 : status;
}

void finalize() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    MPI_Finalize();
}
#endif

} // namespace

bool Communicator::builtWithMpi() {
#ifdef TXC_HAVE_MPI
  return true;
#else
  return false;
#endif
}

std::pair<int, int> Communicator::launchedRankAndSize() {
  const int size = launchedCopies();
  if (size <= 1)
    return {0, 1};
  for (const char *name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
    if (const char *value = std::getenv(name))
      return {std::atoi(value), size};
  return {0, 1};
}

Communicator &Communicator::world() {
  static Communicator *world = [] {
    auto *communicator = new Communicator;
    communicator->initialize();
    return communicator;
  }();
  return *world;
}

void Communicator::initialize() {
  if (!launchedByMpi())
    return;
#ifndef TXC_HAVE_MPI
  copiesWithoutMpi_ = launchedCopies();
#else
  int provided = 0;
  // Only the main thread calls MPI (OpenMP threads run the kernels).
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  std::atexit(finalize);
  launched_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  hooks_ = txrt_communicator{this, size_, allreduceStart, allreduceTest,
                             allreduceWait};
#endif
}

void Communicator::requireMpiIfLaunched() const {
  if (copiesWithoutMpi_ > 1)
    throw InputError(
        "this executable was built without MPI (TXC_MPI=OFF, or no MPI "
        "found), but mpirun started " +
        std::to_string(copiesWithoutMpi_) +
        " copies of it, which would train separately: rebuild txc with "
        "MPI (docs/distributed.md) or run it without mpirun");
}

double Communicator::sum(double value) {
#ifdef TXC_HAVE_MPI
  if (parallel()) {
    double total = 0.0;
    MPI_Allreduce(&value, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return total;
  }
#endif
  return value;
}

uint64_t Communicator::fromRankZero(uint64_t value) {
  if (parallel())
    broadcast(&value, sizeof(value));
  return value;
}

std::string Communicator::fromRankZero(std::string text) {
  if (!parallel())
    return text;
  uint64_t bytes = fromRankZero(uint64_t(text.size()));
  text.resize(size_t(bytes));
  broadcast(text.data(), text.size());
  return text;
}

void Communicator::broadcast([[maybe_unused]] void *data,
                             [[maybe_unused]] size_t bytes) {
#ifdef TXC_HAVE_MPI
  if (launched_)
    MPI_Bcast(data, int(bytes), MPI_BYTE, 0, MPI_COMM_WORLD);
#endif
}

void Communicator::abort(int code) {
#ifdef TXC_HAVE_MPI
  if (parallel())
    MPI_Abort(MPI_COMM_WORLD, code);
#endif
  std::exit(code);
}

} // namespace txrt::driver
