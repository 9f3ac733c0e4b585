//===- Safetensors.cpp - safetensors reader and writer --------------------===//
//
// Header validation turns every inconsistency into an InputError naming the
// file and the tensor; the writer lays tensors out back to back after a
// header padded with spaces to a multiple of 8 bytes.
//
//===----------------------------------------------------------------------===//
#include "formats/Safetensors.h"

#include "core/Error.h"
#include "formats/ContentHash.h"
#include "formats/Json.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <stdexcept>

namespace txrt::driver {

namespace {

struct DTypeRow {
  const char *name;
  size_t size;
};
constexpr DTypeRow kSafetensorsDTypes[] = {
    {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1},
    {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
    {"U32", 4},  {"F32", 4}, {"I64", 8}, {"U64", 8},     {"F64", 8},
};

uint64_t readU64LittleEndian(const unsigned char *bytes) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i)
    value = (value << 8) | bytes[i];
  return value;
}

/// The name under which the checksums table records the metadata's own
/// (reserved: no tensor has it).
constexpr const char *kMetadataChecksumName = "__metadata__";

/// The checksum of the metadata (the checksums entry aside): its entries
/// in key order, each key and value followed by a 0 byte.
uint64_t metadataHash(SafetensorsMetadata entries) {
  std::sort(entries.begin(), entries.end());
  std::string text;
  for (const auto &[key, value] : entries) {
    text += key;
    text += '\0';
    text += value;
    text += '\0';
  }
  return contentHash64(text.data(), text.size());
}

} // namespace

bool looksLikeSafetensors(const std::string &path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error))
    return false;
  uint64_t size = std::filesystem::file_size(path, error);
  if (error || size < 10)
    return false;
  unsigned char head[9];
  FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return false;
  size_t got = std::fread(head, 1, sizeof head, file);
  std::fclose(file);
  uint64_t length = readU64LittleEndian(head);
  return got == sizeof head && head[8] == '{' && length >= 2 &&
         length <= size - 8;
}

const char *safetensorsDTypeName(DType dtype) {
  switch (dtype) {
  case DType::Bool:
    return "BOOL";
  case DType::I8:
    return "I8";
  case DType::U8:
    return "U8";
  case DType::I16:
    return "I16";
  case DType::U16:
    return "U16";
  case DType::I32:
    return "I32";
  case DType::U32:
    return "U32";
  case DType::I64:
    return "I64";
  case DType::U64:
    return "U64";
  case DType::F16:
    return "F16";
  case DType::F32:
    return "F32";
  case DType::F64:
    return "F64";
  }
  return "?";
}

std::optional<size_t> safetensorsDTypeSize(std::string_view dtype) {
  for (const DTypeRow &row : kSafetensorsDTypes)
    if (dtype == row.name)
      return row.size;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Reader
//===----------------------------------------------------------------------===//

namespace {

constexpr size_t kMaxTensorNameBytes = 1024;

/// Why `name` cannot go into a message as it is ("has a control
/// character", "is 100000 bytes long"), or "".
std::string unprintableName(const std::string &name) {
  for (unsigned char c : name)
    if (c < 0x20 || c == 0x7f)
      return "has a control character";
  if (name.size() > kMaxTensorNameBytes)
    return "is " + std::to_string(name.size()) + " bytes long";
  return "";
}

} // namespace

SafetensorsReader::SafetensorsReader(const std::string &path)
    : file_(std::make_unique<BinaryFile>(path)) {
  auto corrupt = [&](const std::string &why) {
    return InputError("'" + path + "' is not a valid safetensors file: " + why);
  };
  if (file_->size() < 8)
    throw InputError("'" + path + "' is truncated: it has " +
                     std::to_string(file_->size()) +
                     " bytes, less than the 8-byte header length");
  unsigned char lengthBytes[8];
  file_->readAt(0, lengthBytes, 8);
  uint64_t headerBytes = readU64LittleEndian(lengthBytes);
  // A text file given where a checkpoint belongs (`--load data.tsv`) reads
  // as a huge header length: say what it is.
  bool text = true;
  for (unsigned char byte : lengthBytes)
    text = text &&
           (std::isprint(byte) || byte == '\t' || byte == '\n' || byte == '\r');
  if (text && (headerBytes > kMaxSafetensorsHeaderBytes ||
               headerBytes > file_->size() - 8)) {
    // A sharded checkpoint's index (model.safetensors.index.json): its
    // "weight_map" names the shards.
    const uint64_t probe = std::min<uint64_t>(file_->size(), 4096);
    std::string head(size_t(probe), '\0');
    file_->readAt(0, head.data(), probe);
    if (head.find("\"weight_map\"") != std::string::npos)
      throw InputError(
          "'" + path + "' is the index of a sharded checkpoint (its "
          "weight_map names the .safetensors shards that hold the tensors): "
          "merge the shards into one file (in PyTorch, update one dict with "
          "safetensors.torch.load_file of each, then save_file) and give "
          "that");
    throw InputError(
        "'" + path + "' is not a safetensors file: it begins with text (" +
        quotedForMessage(
            std::string(reinterpret_cast<const char *>(lengthBytes), 8)) +
        "), where a safetensors file has an 8-byte header length; give the "
        "checkpoint (.safetensors) train --save or export wrote");
  }
  // What PyTorch users give first: torch.save's zip or pickle file, or a
  // numpy array, read as a huge header length.
  if (headerBytes > kMaxSafetensorsHeaderBytes ||
      headerBytes > file_->size() - 8) {
    const unsigned char *b = lengthBytes;
    std::string format;
    if (b[0] == 'P' && b[1] == 'K' && b[2] == 3 && b[3] == 4)
      format = "a zip archive (PyTorch's torch.save, or numpy's .npz)";
    else if (b[0] == 0x80 && b[1] >= 2 && b[1] <= 5)
      format = "a Python pickle (PyTorch's torch.save in its legacy format)";
    else if (b[0] == 0x93 && std::memcmp(b + 1, "NUMPY", 5) == 0)
      format = "a numpy .npy array";
    if (!format.empty())
      throw InputError(
          "'" + path + "' is " + format +
          ", not a safetensors file; save the parameters with "
          "safetensors.torch.save_file({n: p.detach() for n, p in "
          "model.named_parameters()}, 'W.safetensors') under the model's "
          "parameter names (`info` lists them; a state_dict also holds "
          "buffers, which are no parameters)");
  }
  if (headerBytes > kMaxSafetensorsHeaderBytes)
    throw corrupt("the header is too large (" + std::to_string(headerBytes) +
                  " bytes; the limit is " +
                  std::to_string(kMaxSafetensorsHeaderBytes) + ")");
  if (headerBytes > file_->size() - 8)
    throw InputError("'" + path + "' is truncated: the header needs " +
                     std::to_string(headerBytes) + " bytes but the file has " +
                     std::to_string(file_->size() - 8) + " after the length");
  std::string header(size_t(headerBytes), '\0');
  file_->readAt(8, header.data(), header.size());
  dataStart_ = 8 + headerBytes;
  uint64_t dataBytes = file_->size() - dataStart_;

  Json root;
  try {
    root = parseJson(header);
  } catch (const JsonError &error) {
    // The parser quotes what it last read: a whole checksum table when
    // the length is off (9 KB on one line for a small model).
    std::string what = error.what();
    if (what.size() > 160)
      what = what.substr(0, 160) + "...";
    // A header is one JSON object, padded with spaces: one that does not
    // end in '}' was cut short or runs on, where the length says.
    size_t last = header.find_last_not_of(' ');
    bool lengthOff = last == std::string::npos || header[last] != '}';
    throw corrupt(
        (lengthOff
             ? "its 8-byte header length (" + std::to_string(headerBytes) +
                   ") does not end the JSON header: the length or the "
                   "header is damaged ("
             : std::string("invalid header JSON (")) +
        what + ")");
  }
  if (!root.is_object())
    throw corrupt("the header is not a JSON object");

  std::optional<std::string> checksums; // __metadata__'s, read after the tensors
  for (const auto &[name, value] : root.items()) {
    if (name == "__metadata__") {
      if (!value.is_object())
        throw corrupt("__metadata__ is not an object");
      for (const auto &[key, text] : value.items()) {
        if (!text.is_string())
          throw corrupt("__metadata__ value '" + key + "' is not a string");
        if (key == kSafetensorsChecksumsKey)
          checksums = jsonString(text);
        else
          metadata_.emplace_back(key, jsonString(text));
      }
      continue;
    }
    // Names go into messages as they are: a control character (a line
    // break split one error into two, an escape sequence coloured the
    // terminal) or a 100 kB name made the message unreadable. No
    // parameter's name has either.
    if (std::string why = unprintableName(name); !why.empty())
      throw corrupt("a tensor name " + why + ": " + quotedForMessage(name) +
                    " (parameter names are printable and at most " +
                    std::to_string(kMaxTensorNameBytes) + " bytes)");
    const std::string &tensorName = name; // lambdas cannot capture bindings
    auto bad = [&](const std::string &why) {
      return corrupt("tensor '" + tensorName + "' " + why);
    };
    if (!value.is_object())
      throw bad("is not described by an object");
    const Json *dtype = jsonMember(value, "dtype");
    const Json *shape = jsonMember(value, "shape");
    const Json *offsets = jsonMember(value, "data_offsets");
    if (!dtype || !dtype->is_string() || !shape || !shape->is_array() ||
        !offsets || !offsets->is_array())
      throw bad("lacks a string 'dtype', an array 'shape' or an array "
                "'data_offsets'");
    SafetensorsEntry entry;
    entry.name = name;
    entry.dtype = jsonString(*dtype);
    std::optional<size_t> elementSize = safetensorsDTypeSize(entry.dtype);
    if (!elementSize)
      throw bad("has an unknown dtype '" + entry.dtype + "'");
    for (const Json &dim : *shape) {
      std::optional<int64_t> size = jsonInteger(dim);
      if (!size || *size < 0)
        throw bad("has a shape that is not a list of non-negative integers");
      entry.shape.push_back(*size);
    }
    std::optional<int64_t> begin, end;
    if (offsets->size() == 2) {
      begin = jsonInteger((*offsets)[0]);
      end = jsonInteger((*offsets)[1]);
    }
    if (!begin || !end || *begin < 0 || *end < *begin)
      throw bad("has invalid data_offsets (expected [begin, end] with "
                "0 <= begin <= end)");
    entry.begin = uint64_t(*begin);
    entry.end = uint64_t(*end);
    if (entry.end > dataBytes)
      throw InputError("'" + path + "' is truncated: tensor '" + name +
                       "' needs data bytes [" + std::to_string(entry.begin) +
                       ", " + std::to_string(entry.end) +
                       ") but the data section has " +
                       std::to_string(dataBytes) + " bytes");
    std::optional<int64_t> bytes =
        checkedByteSize(entry.shape, int64_t(*elementSize));
    if (!bytes)
      throw bad("has a shape too large to address");
    if (uint64_t(*bytes) != entry.end - entry.begin)
      throw bad("has " + std::to_string(entry.end - entry.begin) +
                " data bytes but shape " + formatShape(entry.shape) + " of " +
                entry.dtype + " needs " + std::to_string(*bytes));
    tensors_.push_back(std::move(entry));
  }
  byName_.reserve(tensors_.size());
  for (size_t i = 0; i < tensors_.size(); ++i)
    byName_.emplace(tensors_[i].name, i);
  checkDataLayout(path, dataBytes);
  if (checksums)
    attachChecksums(*checksums, corrupt);
}

void SafetensorsReader::attachChecksums(
    const std::string &text,
    const std::function<InputError(const std::string &)> &corrupt) {
  auto bad = [&] {
    return corrupt(std::string("__metadata__ '") + kSafetensorsChecksumsKey +
                   "' is not a JSON object of 16-hex-digit strings");
  };
  Json table;
  try {
    table = parseJson(text);
  } catch (const JsonError &) {
    throw bad();
  }
  if (!table.is_object())
    throw bad();
  auto changed = [&](const std::string &what) {
    return InputError("'" + path() + "' is damaged: " + what +
                      ": the file changed after it was saved. Use another "
                      "copy; if you edited it on purpose, remove '" +
                      kSafetensorsChecksumsKey + "' from its __metadata__");
  };
  for (const auto &[name, hex] : table.items()) {
    if (!hex.is_string())
      throw bad();
    std::string digits = jsonString(hex);
    if (digits.size() != 16 ||
        digits.find_first_not_of("0123456789abcdef") != std::string::npos)
      throw bad();
    if (name == kMetadataChecksumName) {
      // The tokenizer, labels and training position live here: a change
      // is as wrong as a tensor's, and caught when the file is opened.
      uint64_t recorded = std::stoull(digits, nullptr, 16);
      uint64_t actual = metadataHash(metadata_);
      if (actual != recorded)
        throw changed("its __metadata__ (the tokenizer, labels, training "
                      "position and config stored with the tensors) does "
                      "not match the checksum written with it (recorded " +
                      hashHex(recorded) + ", read " + hashHex(actual) + ")");
      continue;
    }
    bool found = false;
    for (SafetensorsEntry &entry : tensors_)
      if (entry.name == name) {
        entry.checksum = std::stoull(digits, nullptr, 16);
        found = true;
      }
    if (!found)
      throw changed("its checksums list a tensor '" + name +
                    "' that the file does not hold");
  }
  // The table lists every tensor the file was written with, and is not
  // under a checksum of its own: a name damaged in it (or a tensor added or
  // renamed by hand) left the tensor read unchecked, whatever its bytes.
  for (const SafetensorsEntry &entry : tensors_)
    if (!entry.checksum)
      throw changed("tensor '" + entry.name +
                    "' has no entry in the checksums written with the file");
}

void SafetensorsReader::checkDataLayout(const std::string &path,
                                        uint64_t dataBytes) const {
  // The tensors must tile the data section: back to back from offset 0 to
  // its end, as the reference implementation requires. Overlapping or
  // shifted ranges would load one tensor's bytes as another's.
  std::vector<const SafetensorsEntry *> order;
  for (const SafetensorsEntry &entry : tensors_)
    order.push_back(&entry);
  std::stable_sort(order.begin(), order.end(), [](auto *a, auto *b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  auto range = [](const SafetensorsEntry &entry) {
    return "[" + std::to_string(entry.begin) + ", " +
           std::to_string(entry.end) + ")";
  };
  auto corrupt = [&](const std::string &why) {
    return InputError("'" + path + "' is not a valid safetensors file: " + why);
  };
  // Overlaps first: a tensor given another's offsets also leaves a gap
  // where its own bytes were, and the gap would name a tensor that is fine.
  for (size_t i = 1; i < order.size(); ++i)
    if (order[i]->begin < order[i - 1]->end) {
      // Both named, in header order: either may be the edited one.
      const SafetensorsEntry *a = order[i - 1], *b = order[i];
      if (a > b)
        std::swap(a, b);
      throw corrupt("the data_offsets of tensors '" + a->name + "' " +
                    range(*a) + " and '" + b->name + "' " + range(*b) +
                    " overlap (each tensor has bytes of its own)");
    }
  uint64_t expected = 0;
  for (const SafetensorsEntry *entry : order) {
    if (entry->begin > expected)
      throw corrupt("tensor '" + entry->name + "' has data_offsets " +
                    range(*entry) + " but the previous tensor ends at " +
                    std::to_string(expected) +
                    " (tensors must be stored back to back)");
    expected = entry->end;
  }
  if (expected != dataBytes)
    throw corrupt("the data section has " + std::to_string(dataBytes) +
                  " bytes but its tensors cover " + std::to_string(expected));
}

const SafetensorsEntry *SafetensorsReader::find(std::string_view name) const {
  // By an index (each tensor's checksum and every caller's lookup searched
  // them all: a header of 80000 tensors took minutes).
  auto it = byName_.find(std::string(name));
  return it == byName_.end() ? nullptr : &tensors_[it->second];
}

const std::string *
SafetensorsReader::metadataValue(std::string_view key) const {
  for (const auto &[name, value] : metadata_)
    if (name == key)
      return &value;
  return nullptr;
}

void SafetensorsReader::read(const SafetensorsEntry &entry, void *out) const {
  size_t bytes = size_t(entry.end - entry.begin);
  file_->readAt(dataStart_ + entry.begin, out, bytes);
  if (!entry.checksum)
    return;
  uint64_t actual = contentHash64(out, bytes);
  if (actual != *entry.checksum)
    throw InputError(
        "'" + path() + "' is damaged: the bytes of tensor '" + entry.name +
        "' do not match the checksum written with them (recorded " +
        hashHex(*entry.checksum) + ", read " + hashHex(actual) +
        "): the file changed after it was saved. Use another copy; if "
        "you edited it on purpose, remove '" + kSafetensorsChecksumsKey +
        "' from its __metadata__");
}

void SafetensorsReader::verifyChecksums() const {
  std::vector<char> bytes;
  for (const SafetensorsEntry &entry : tensors_) {
    if (!entry.checksum)
      continue;
    bytes.resize(size_t(entry.end - entry.begin));
    read(entry, bytes.data());
  }
}

//===----------------------------------------------------------------------===//
// Writer
//===----------------------------------------------------------------------===//

void writeSafetensors(const std::string &path,
                      const std::vector<SafetensorsTensorView> &tensors,
                      const SafetensorsMetadata &metadata) {
  Json header = Json::object();
  Json meta = Json::object();
  for (const auto &[key, value] : metadata)
    if (key != kSafetensorsChecksumsKey) // the writer's own
      meta[key] = value;
  Json checksums = Json::object();
  std::set<std::string> names;
  uint64_t offset = 0;
  std::vector<uint64_t> sizes;
  for (const SafetensorsTensorView &tensor : tensors) {
    if (tensor.name == "__metadata__" || !names.insert(tensor.name).second)
      throw std::invalid_argument("writeSafetensors: duplicate or reserved "
                                  "tensor name '" +
                                  tensor.name + "'");
    std::optional<int64_t> bytes =
        checkedByteSize(tensor.shape, int64_t(dtypeSize(tensor.dtype)));
    if (!bytes)
      throw std::invalid_argument("writeSafetensors: tensor '" + tensor.name +
                                  "' has an invalid shape");
    Json description = Json::object();
    description["dtype"] = safetensorsDTypeName(tensor.dtype);
    description["shape"] = tensor.shape;
    description["data_offsets"] = {offset, offset + uint64_t(*bytes)};
    // (Names checked unique above.)
    appendMember(header, tensor.name, std::move(description));
    appendMember(checksums, tensor.name,
                 hashHex(contentHash64(tensor.data, size_t(*bytes))));
    sizes.push_back(uint64_t(*bytes));
    offset += uint64_t(*bytes);
  }
  if (!meta.empty()) {
    // Over the values as a reader gets them back (text that is not UTF-8
    // is written with U+FFFD).
    SafetensorsMetadata written;
    Json readBack = parseJson(toJson(meta, /*replaceInvalidUtf8=*/true));
    for (const auto &[key, value] : readBack.items())
      written.emplace_back(key, jsonString(value));
    checksums[kMetadataChecksumName] = hashHex(metadataHash(written));
  }
  if (!checksums.empty())
    meta[kSafetensorsChecksumsKey] = toJson(checksums, /*replaceInvalidUtf8=*/true);
  if (!meta.empty())
    header["__metadata__"] = std::move(meta);
  // Metadata values may hold paths that are not UTF-8 (--data): written
  // with U+FFFD rather than failing at the end of a training run.
  std::string text = toJson(header, /*replaceInvalidUtf8=*/true);
  text.append((8 - text.size() % 8) % 8, ' ');
  // A file no reader would open (this one's included) must not replace
  // what is there: refused before anything is written.
  if (text.size() > kMaxSafetensorsHeaderBytes) {
    std::string largest;
    size_t largestBytes = 0;
    for (const auto &[key, value] : metadata)
      if (value.size() > largestBytes) {
        largest = key;
        largestBytes = value.size();
      }
    throw ResourceError(
        "cannot write '" + path + "': its header would be " +
        std::to_string(text.size()) + " bytes (__metadata__ '" + largest +
        "' alone " + std::to_string(largestBytes) + "), more than the " +
        std::to_string(kMaxSafetensorsHeaderBytes) +
        " safetensors readers accept ('" + path + "' is left as it was)");
  }

  unsigned char length[8];
  for (int i = 0; i < 8; ++i)
    length[i] = static_cast<unsigned char>((uint64_t(text.size()) >> (8 * i)));
  // A checkpoint is a run's work: kept when it cannot replace the file.
  AtomicFileWriter writer(path, AtomicFileWriter::WhenNotReplaced::Keep);
  writer.write(length, 8);
  writer.write(text);
  for (size_t i = 0; i < tensors.size(); ++i)
    writer.write(tensors[i].data, size_t(sizes[i]));
  writer.commit();
}

} // namespace txrt::driver
