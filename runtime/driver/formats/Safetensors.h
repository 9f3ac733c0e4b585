//===- Safetensors.h - safetensors files: read and write --------*- C++ -*-===//
//
// The format: an 8-byte little-endian header length N, N bytes of JSON
// {NAME: {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ...,
// "__metadata__": {KEY: STRING}}, then the data section; offsets are
// relative to its start. Opening a file validates the whole header (size
// limit, JSON, every entry's dtype, shape and offsets against the data
// section, the tensors stored back to back without overlap or gap), so
// later reads cannot go out of bounds or read one tensor's bytes as
// another's. Writing is atomic (FileIO.h).
//
// Checksums: the writer records a 64-bit hash of every tensor's bytes
// (ContentHash.h) in __metadata__ "checksums", a JSON object {NAME: 16 hex
// digits} in a string (other readers ignore it, as they do any metadata);
// the reader checks a tensor against it as it reads it, so a file damaged
// or changed after it was written is an error naming the file and the
// tensor instead of weights loaded silently. The metadata has one too,
// under the reserved name "__metadata__" (its entries in key order, each key
// and value followed by a 0 byte), checked when the file is opened. Files
// without the entry (other writers, older txc) are read unchecked. The
// entry is not part of metadata().
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_SAFETENSORS_H
#define TXRT_DRIVER_SAFETENSORS_H

#include "core/Error.h"
#include "core/Tensor.h"
#include "formats/FileIO.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace txrt::driver {

/// Headers larger than this are rejected (the reference implementation's
/// limit).
constexpr uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;

/// Whether `path` is a regular file that starts as a safetensors file does
/// (an 8-byte little-endian header length that fits the file, then '{'):
/// a cheap look for what an output must not replace, not a validation.
bool looksLikeSafetensors(const std::string &path);

/// A tensor listed in a safetensors header.
struct SafetensorsEntry {
  std::string name;
  std::string dtype; ///< as written: "F32", "BF16", "I64", ...
  Shape shape;
  uint64_t begin = 0, end = 0; ///< byte range in the data section
  /// The hash of its bytes the writer recorded (ContentHash.h), if any.
  std::optional<uint64_t> checksum;
};

using SafetensorsMetadata = std::vector<std::pair<std::string, std::string>>;

/// An open, validated safetensors file.
class SafetensorsReader {
public:
  /// Opens `path` and validates its header; throws InputError.
  explicit SafetensorsReader(const std::string &path);

  const std::string &path() const { return file_->path(); }
  const std::vector<SafetensorsEntry> &tensors() const { return tensors_; }
  const SafetensorsMetadata &metadata() const { return metadata_; }
  const SafetensorsEntry *find(std::string_view name) const;
  /// The __metadata__ value of `key`, or nullptr.
  const std::string *metadataValue(std::string_view key) const;

  /// Copies the entry's end - begin bytes to `out`; throws InputError when
  /// they do not match the entry's checksum.
  void read(const SafetensorsEntry &entry, void *out) const;
  /// Reads every tensor with a checksum and compares: InputError (as read
  /// says it) at the first that does not match.
  void verifyChecksums() const;

private:
  /// Tensors tile the data section: no overlap, no gap, nothing after.
  void checkDataLayout(const std::string &path, uint64_t dataBytes) const;
  /// Gives the tensors the checksums of the "checksums" entry of
  /// __metadata__ (`text`), which must list every tensor and no other (the
  /// file is damaged otherwise: InputError).
  void attachChecksums(
      const std::string &text,
      const std::function<InputError(const std::string &)> &corrupt);

  std::unique_ptr<BinaryFile> file_;
  uint64_t dataStart_ = 0;
  std::vector<SafetensorsEntry> tensors_;
  std::unordered_map<std::string, size_t> byName_; ///< tensors_ by name
  SafetensorsMetadata metadata_;
};

/// The __metadata__ key of the per-tensor checksums (reserved: the writer
/// sets it).
constexpr const char *kSafetensorsChecksumsKey = "checksums";

/// A tensor to write: `data` holds numElements(shape) elements of `dtype`.
struct SafetensorsTensorView {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  const void *data = nullptr;
};

/// Writes `tensors` (in this order) and `metadata` to `path` atomically.
/// Throws InputError on I/O failure, std::invalid_argument on duplicate
/// names or an unsupported dtype (F16 has no element type here).
void writeSafetensors(const std::string &path,
                      const std::vector<SafetensorsTensorView> &tensors,
                      const SafetensorsMetadata &metadata = {});

/// The safetensors spelling of a dtype ("F32", "I32", "BOOL", ...).
const char *safetensorsDTypeName(DType dtype);

/// Bytes per element of a safetensors dtype string, nullopt if unknown.
std::optional<size_t> safetensorsDTypeSize(std::string_view dtype);

} // namespace txrt::driver

#endif // TXRT_DRIVER_SAFETENSORS_H
