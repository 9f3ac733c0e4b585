//===- EntryChecks.h - what a compiled entry checks of its caller -*- C++ -*-===//
//
// A compiled entry (txc_entry_NAME) takes raw pointers and sizes from its
// caller, the driver or a program that embeds the object (examples/embed).
// Before it reads any of them it asks the runtime (txrt_check_entry,
// txrt_cuda_check_entry) whether they can be read: a dim over its bound
// would run past the arena, a NULL array would be dereferenced. Shared by
// the CPU and CUDA runtimes: the first problem, or "".
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_ENTRYCHECKS_H
#define TXRT_ENTRYCHECKS_H

#include <cstdint>
#include <string>

namespace txrt {

inline std::string entryArgumentProblem(
    const int64_t *dims, const int64_t *dimIndex, const int64_t *dimBound,
    int64_t numChecked, const void *arena, int64_t arenaBytes,
    const void *const *inputs, int64_t numInputs, const void *const *outputs,
    int64_t numOutputs, const void *params, int64_t paramsBytes) {
  // The header promised NULL pointers are refused; params was not checked
  // (a NULL parameter arena was a segfault in the first kernel).
  if (paramsBytes > 0 && !params)
    return "params is NULL (the entry reads the parameter arena, " +
           std::to_string(paramsBytes) + " bytes)";
  if (numChecked > 0 && !dims)
    return "dims is NULL (the entry reads " + std::to_string(numChecked) +
           " of them)";
  for (int64_t k = 0; k < numChecked; ++k) {
    int64_t value = dims[dimIndex[k]];
    if (value < 0 || value > dimBound[k])
      return "dims[" + std::to_string(dimIndex[k]) + "] = " +
             std::to_string(value) + " is outside [0, " +
             std::to_string(dimBound[k]) +
             "], its bound (dims in the order of the generated header)";
  }
  if (arenaBytes > 0 && !arena)
    return "arena is NULL (the entry needs " + std::to_string(arenaBytes) +
           " bytes)";
  auto pointers = [](const char *what, const void *const *array,
                     int64_t count) -> std::string {
    if (count > 0 && !array)
      return std::string(what) + " is NULL (the entry has " +
             std::to_string(count) + ")";
    for (int64_t i = 0; i < count; ++i)
      if (!array[i])
        return std::string(what) + "[" + std::to_string(i) + "] is NULL";
    return "";
  };
  std::string problem = pointers("inputs", inputs, numInputs);
  return problem.empty() ? pointers("outputs", outputs, numOutputs) : problem;
}

/// A cache the entry writes in place (decode_step, lm_step) takes the
/// `written` new positions at its last rows; with `held` < `written` rows
/// the write would start before the caller's buffer. "" when it fits.
inline std::string cacheRowsProblem(int64_t input, int64_t written,
                                    int64_t held) {
  if (written <= held)
    return "";
  return "inputs[" + std::to_string(input) +
         "], a cache the entry writes in place, holds " + std::to_string(held) +
         " position(s) (its axis 1) but the entry writes " +
         std::to_string(written) +
         " new one(s) at its last rows: the cache must hold every position "
         "so far, the new ones last (its length >= the new positions')";
}

} // namespace txrt

#endif // TXRT_ENTRYCHECKS_H
