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
#include <cstdio>
#include <mutex>
#include <string>
#include <unordered_map>

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
  if (problem.empty())
    problem = pointers("outputs", outputs, numOutputs);
  if (!problem.empty())
    return problem;
  // An entry writes its outputs while it still reads its inputs (and its
  // other outputs): one buffer for both gave wrong outputs with status 0.
  for (int64_t k = 0; k < numOutputs; ++k) {
    for (int64_t j = 0; j < numInputs; ++j)
      if (outputs[k] == inputs[j])
        return "outputs[" + std::to_string(k) + "] is inputs[" +
               std::to_string(j) +
               "]: an entry writes its outputs while it reads its inputs, "
               "so each output needs a buffer of its own";
    for (int64_t l = 0; l < k; ++l)
      if (outputs[k] == outputs[l])
        return "outputs[" + std::to_string(l) + "] and outputs[" +
               std::to_string(k) +
               "] are one buffer: each output needs a buffer of its own";
  }
  return "";
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

/// Why dims[`index`] = `value` is refused for an entry that reads a fixed
/// position of it, needing `minimum` entries (txrt_check_dim_min), or "".
inline std::string dimMinProblem(int64_t index, int64_t value,
                                 int64_t minimum) {
  if (value >= minimum)
    return "";
  return "dims[" + std::to_string(index) + "] is " + std::to_string(value) +
         ", but this entry reads a fixed position of that dim (an index such "
         "as x[:, 0] or x[:, -1], or an argmax along it): it needs at least " +
         std::to_string(minimum);
}

/// What runs an entry now: each context and activation arena an entry
/// call holds, by the thread that holds it. One context runs one entry at
/// a time, and the arena holds every intermediate tensor: two threads on
/// one gave wrong outputs with status 0 (a tester's four threads), and on
/// one arena segfaults inside the kernels. An entry claims both in its
/// argument check and releases them at its exit (txrt_entry_done).
class EntryClaims {
public:
  /// Claims `context` and `arena` (NULL: none) for the calling thread; the
  /// problem when another thread holds either, else "". A thread that holds
  /// them already keeps them.
  static std::string claim(const void *context, const void *arena) {
    std::lock_guard<std::mutex> lock(mutex());
    const void *me = thread();
    auto heldElsewhere = [&](const void *what) {
      auto found = holders().find(what);
      return found != holders().end() && found->second != me;
    };
    if (heldElsewhere(context))
      return "the context is running an entry on another thread now: one "
             "context runs one entry at a time (give each thread its own "
             "context and activation arena; docs/codegen.md)";
    if (arena && heldElsewhere(arena)) {
      char address[32];
      std::snprintf(address, sizeof(address), "%p", arena);
      return std::string("the activation arena at ") + address +
             " is in use by an entry on another thread now: it holds every "
             "intermediate tensor, so each thread needs its own "
             "(docs/codegen.md)";
    }
    holders()[context] = me;
    if (arena)
      holders()[arena] = me;
    return "";
  }

  /// Releases what the calling thread holds of `context` and `arena`.
  static void release(const void *context, const void *arena) {
    std::lock_guard<std::mutex> lock(mutex());
    for (const void *what : {context, arena}) {
      auto found = what ? holders().find(what) : holders().end();
      if (found != holders().end() && found->second == thread())
        holders().erase(found);
    }
  }

  /// Forgets every claim of `what` (a context being destroyed: one made
  /// at its address later is another, which a claim never released, by a
  /// caller's own txrt_check_entry, refused).
  static void forget(const void *what) {
    std::lock_guard<std::mutex> lock(mutex());
    holders().erase(what);
  }

private:
  static std::mutex &mutex() {
    static std::mutex m;
    return m;
  }
  static std::unordered_map<const void *, const void *> &holders() {
    static std::unordered_map<const void *, const void *> map;
    return map;
  }
  /// A token of the calling thread.
  static const void *thread() {
    static thread_local char token;
    return &token;
  }
};

} // namespace txrt

#endif // TXRT_ENTRYCHECKS_H
