//===- TranslateCommand.h - `PROGRAM translate`: decode sentences -*- C++ -*-===//
//
// Sentences come from the arguments or, when there are none, one per line
// from stdin (an empty line gives an empty output line). Each is split like
// the training data (splitWords), mapped to source ids ([UNK] for unknown
// words) and checked against the source bound; batches of up to --batch
// sentences of similar lengths are decoded greedily together (with --beam
// N, --batch / N sentences' hypotheses together), and every translation is
// printed on its own line, in input order.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_TRANSLATECOMMAND_H
#define TXRT_DRIVER_TRANSLATECOMMAND_H

#include "cli/CommandLine.h"
#include "decoding/Decoding.h"
#include "core/ModelAbi.h"
#include "core/ModelInfo.h"
#include "data/ParallelText.h"

#include <istream>
#include <ostream>

namespace txrt::driver {

/// Translates `sources` (source ids, each within the bound) in batches of
/// `batch` rows: greedy (options.beamSize == 1) a sentence a row, beam
/// search batch / beamSize sentences' hypotheses at once (at least one
/// sentence, beamDecodeBatch). Batches hold sentences of similar source
/// lengths (stably sorted); the outputs are in the order of `sources`.
/// `interrupted`, when given, is asked between batches: true throws
/// Interrupted (train's validation, abandoned at a stop signal). Logits
/// that are not finite are a NonFiniteLogitsError about the source: named
/// by `where(index)` ("<stdin>:3") when given, else by its index.
std::vector<TokenIds>
translateAll(NextTokenModel &decoder, const std::vector<TokenIds> &sources,
             int64_t batch, const DecodeOptions &options,
             const std::function<bool()> &interrupted = {},
             const std::function<std::string(size_t)> &where = {});

/// Thrown by work abandoned because `interrupted` said so.
struct Interrupted {};

/// The decoding options of a model: specials from `target`, maxLength the
/// target bound (or `maxLength` when smaller; larger is an InputError).
DecodeOptions decodeOptionsFor(const Vocabulary &target,
                               const SequenceBounds &bounds,
                               const std::optional<int64_t> &maxLength);

int translateCommand(const ModelInfo &model, const txc_entry_fn *entryTable,
                     const TranslateOptions &options, std::istream &in,
                     std::ostream &out, std::ostream &err);

} // namespace txrt::driver

#endif // TXRT_DRIVER_TRANSLATECOMMAND_H
