//===- SentencePieceUnavailable.cpp - SentencePiece.h without the library -===//
//
// Built instead of SentencePiece.cpp when CMake finds no libsentencepiece:
// every way to get a model throws an InputError that says how to get one
// (install libsentencepiece-dev and rebuild txc); nothing else can be
// called, since no SentencePieceModel can exist.
//
//===----------------------------------------------------------------------===//
#include "data/SentencePiece.h"
#include "core/Error.h"

namespace sentencepiece {
class SentencePieceProcessor {};
} // namespace sentencepiece

namespace txrt::driver {

namespace {

[[noreturn]] void unavailable(const std::string &what) {
  throw InputError(what + " needs SentencePiece, and this executable was "
                          "built without it (install libsentencepiece-dev, "
                          "as scripts/install-deps.sh does, rebuild txc and "
                          "recompile the model)");
}

} // namespace

SentencePieceModel::SentencePieceModel() = default;
SentencePieceModel::SentencePieceModel(SentencePieceModel &&) noexcept =
    default;
SentencePieceModel &
SentencePieceModel::operator=(SentencePieceModel &&) noexcept = default;
SentencePieceModel::~SentencePieceModel() = default;

SentencePieceModel SentencePieceModel::train(const std::vector<std::string> &,
                                             const SentencePieceOptions &) {
  unavailable("a subword tokenizer (--tokenizer spm)");
}
SentencePieceModel SentencePieceModel::fromBytes(std::string,
                                                 const std::string &origin) {
  unavailable("the SentencePiece model of " + origin);
}
SentencePieceModel SentencePieceModel::load(const std::string &path) {
  unavailable("'" + path + "'");
}
void SentencePieceModel::save(const std::string &) const {}
std::vector<int32_t> SentencePieceModel::encode(std::string_view) const {
  return {};
}
std::string SentencePieceModel::decode(const std::vector<int32_t> &) const {
  return {};
}
std::string SentencePieceModel::piece(int32_t) const { return {}; }
std::optional<SentencePieceOptions::Algorithm>
SentencePieceModel::algorithm() const {
  return std::nullopt;
}
int32_t SentencePieceModel::size() const { return 0; }
int32_t SentencePieceModel::padId() const { return 0; }
int32_t SentencePieceModel::unkId() const { return 0; }
int32_t SentencePieceModel::sosId() const { return 0; }
int32_t SentencePieceModel::eosId() const { return 0; }

} // namespace txrt::driver
