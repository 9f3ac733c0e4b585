//===- Divergence.h - non-finite training state, first bad step -*- C++ -*-===//
//
// A training step's loss is computed before its update, so a finite loss
// says nothing about what the update wrote: a huge learning rate or weight
// decay can leave parameters or Adam moments NaN or infinite while the
// printed loss still looks fine. DivergenceWatch scans the parameter arena
// (parameters and moments, FiniteCheck.h) after updates and reports the
// first update that made a value non-finite, and which tensor and element
// it was, so the run can stop before such a state is saved.
//
// Scanning after every update costs one pass over 3x the parameters; on a
// toy model with millisecond steps that is several percent of the run. So
// scans are budgeted: after an update, scan only while the time spent
// scanning stays within `budget` (default 1%) of the time spent in updates;
// larger models, whose steps cost far more per parameter, get a scan after
// every update within the same budget. On a device the scan's time
// includes copying the arena back, so the budget bounds those copies too. The caller also asks for a scan
// where it matters (before every save, at the end, after a non-finite
// loss). A non-finite value never becomes finite again under Adam, so when
// a scan finds one after updates that were not scanned, the first bad
// update lies after the last clean scan: the run is replayed from its
// restore point (the state the run started from, or its last save; both
// are known to be finite) with a scan after each update past the last
// clean scan. Steps are deterministic ((parameters, moments, step, seed,
// batch) -> the same bits), so the replay meets the same value. The
// replay costs the steps since the restore point, and only on failure.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_DIVERGENCE_H
#define TXRT_DRIVER_DIVERGENCE_H

#include "core/Parameters.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace txrt::driver {

/// The first update found to leave a non-finite value.
struct Divergence {
  int64_t step = 0;          ///< the update that made the value non-finite
  int64_t earliestStep = 0;  ///< == step when exact; else the first update
                             ///< it may have been (a replay did not find it)
  std::string tensor, value; ///< "exp_avg_sq of 'w'", "inf at [1, 2]"
  double lossBefore = 0;     ///< the loss that update's step reported
  bool exact() const { return earliestStep == step; }
  /// "the update of step 7 made 'w' non-finite (inf at [1, 2]; the loss
  /// before it was 3.1416)".
  std::string describe() const;
};

class DivergenceWatch {
public:
  /// Runs update `step` on the arena and returns the loss it reported.
  using StepFunction = std::function<double(int64_t step)>;
  /// Puts the arena back to the restore point.
  using RestoreFunction = std::function<void()>;
  /// The arena's current values on the host, asked for at every scan (a
  /// device's arena is copied back then: ModelRunner::params().read()).
  using ArenaView = std::function<const ParameterArena &()>;

  /// `startStep`: the updates the arena holds now (finite: initialized or
  /// loaded and checked); it is the first restore point.
  DivergenceWatch(ArenaView params, int64_t startStep,
                  StepFunction replayStep, RestoreFunction restore,
                  double budget = 0.01);

  /// After update `step` (which took `seconds` and reported `loss`): scans
  /// when the budget allows.
  std::optional<Divergence> afterStep(int64_t step, double seconds,
                                      double loss);
  /// Scans the arena after update `step` now.
  std::optional<Divergence> check(int64_t step, double loss);
  /// The arena after update `step` was saved and checked: the new restore
  /// point (the restore function must now bring that state back).
  void savedAt(int64_t step);

  int64_t scans() const { return scans_; }

private:
  std::optional<Divergence> locate(int64_t step, double loss,
                                   const ParameterArena::NonFiniteValue &found);

  ArenaView params_;
  StepFunction replayStep_;
  RestoreFunction restore_;
  double budget_;
  int64_t restoreStep_, cleanStep_;
  double stepSeconds_ = 0, scanSeconds_ = 0;
  int64_t scans_ = 0;
};

} // namespace txrt::driver

#endif // TXRT_DRIVER_DIVERGENCE_H
