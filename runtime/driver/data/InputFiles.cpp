//===- InputFiles.cpp - read entry inputs from .npy or text files ---------===//
//
// Text parsing (std::from_chars, locale-free), ragged-row padding and the
// checked element conversions shared by text and .npy inputs.
//
//===----------------------------------------------------------------------===//
#include "data/InputFiles.h"
#include "core/Error.h"
#include "core/Memory.h"
#include "data/Tokenizer.h"
#include "formats/FileIO.h"
#include "formats/Npy.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

namespace txrt::driver {

std::string InputSource::describe() const {
  return "input '" + name + "' ('" + path + "')";
}

namespace {

/// "[1, 2]": the multi-index of flat element `flat` in `shape`.
std::string formatIndex(int64_t flat, const Shape &shape) {
  Shape index(shape.size(), 0);
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] > 0) {
      index[i] = flat % shape[i];
      flat /= shape[i];
    }
  }
  return formatShape(index);
}

/// One element as an exact integer (integer and bool sources) or a double.
struct Element {
  bool isInteger;
  int64_t integer; // valid when isInteger
  bool tooLarge;   // an unsigned value above INT64_MAX
  double real;
  uint64_t unsignedValue = 0; // valid when tooLarge
};

template <typename T> T loadAs(const void *data, int64_t i) {
  T value;
  std::memcpy(&value, static_cast<const char *>(data) + i * int64_t(sizeof(T)),
              sizeof(T));
  return value;
}

/// An IEEE 754 binary16 value as a double (exact: every half is a double).
double halfToDouble(uint16_t bits) {
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  const double sign = (bits & 0x8000) ? -1.0 : 1.0;
  if (exponent == 0x1f)
    return mantissa ? std::numeric_limits<double>::quiet_NaN()
                    : sign * std::numeric_limits<double>::infinity();
  if (exponent == 0) // zero and subnormals: mantissa * 2^-24
    return sign * std::ldexp(double(mantissa), -24);
  return sign * std::ldexp(double(mantissa | 0x400), exponent - 25);
}

Element loadElement(const Tensor &tensor, int64_t i) {
  const void *data = tensor.data();
  auto integer = [](int64_t v) { return Element{true, v, false, double(v)}; };
  switch (tensor.dtype) {
  case DType::Bool:
    return integer(loadAs<uint8_t>(data, i) != 0);
  case DType::I8:
    return integer(loadAs<int8_t>(data, i));
  case DType::U8:
    return integer(loadAs<uint8_t>(data, i));
  case DType::I16:
    return integer(loadAs<int16_t>(data, i));
  case DType::U16:
    return integer(loadAs<uint16_t>(data, i));
  case DType::I32:
    return integer(loadAs<int32_t>(data, i));
  case DType::U32:
    return integer(loadAs<uint32_t>(data, i));
  case DType::I64:
    return integer(loadAs<int64_t>(data, i));
  case DType::U64: {
    uint64_t v = loadAs<uint64_t>(data, i);
    if (v > uint64_t(std::numeric_limits<int64_t>::max()))
      return Element{true, 0, true, double(v), v};
    return integer(int64_t(v));
  }
  case DType::F32:
    return Element{false, 0, false, double(loadAs<float>(data, i))};
  case DType::F64:
    return Element{false, 0, false, loadAs<double>(data, i)};
  case DType::F16:
    return Element{false, 0, false, halfToDouble(loadAs<uint16_t>(data, i))};
  }
  return Element{false, 0, false, 0.0};
}

/// A token for an error message: at most 24 bytes (not cut inside a
/// character), control characters escaped (escapeForMessage), other bytes
/// as they are (a full-width digit showed as '???').
std::string printable(std::string_view token) {
  size_t cut = std::min<size_t>(token.size(), 24);
  while (cut < token.size() && cut > 0 &&
         (static_cast<unsigned char>(token[cut]) & 0xC0) == 0x80)
    --cut;
  return escapeForMessage(token.substr(0, cut)) +
         (cut < token.size() ? "..." : "");
}

std::string formatElement(const Element &element) {
  if (element.isInteger && !element.tooLarge)
    return std::to_string(element.integer);
  if (element.tooLarge) // as stored, not rounded to a double
    return std::to_string(element.unsignedValue);
  char buffer[32];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), element.real);
  return std::string(buffer, result.ptr);
}

/// Whether an integer element is a float32 exactly.
bool integerIsExactFloat(const Element &element) {
  if (element.tooLarge) { // above INT64_MAX: a uint64
    const float value = float(element.unsignedValue);
    return value < 18446744073709551616.0f &&
           uint64_t(value) == element.unsignedValue;
  }
  const float value = float(element.integer);
  // -2^63 is exact; +2^63 (a rounded INT64_MAX) is not an int64.
  if (value >= 9223372036854775808.0f)
    return false;
  return int64_t(value) == element.integer;
}

} // namespace

Tensor convertTensor(const Tensor &tensor, DType dtype,
                     const InputSource &source) {
  Tensor result = allocateTensor(dtype, tensor.shape, source.describe());
  int64_t count = result.numElements();
  for (int64_t i = 0; i < count; ++i) {
    Element element = loadElement(tensor, i);
    auto bad = [&](const std::string &why) {
      return InputError(source.describe() + ": value " +
                        formatElement(element) + " at " +
                        formatIndex(i, tensor.shape) + " " + why);
    };
    switch (dtype) {
    case DType::F32: {
      float value = float(element.real);
      // float64 (or text) values beyond float32's range would become inf.
      if (std::isfinite(element.real) && !std::isfinite(value))
        throw bad("does not fit float32 (the input is f32; its largest "
                  "magnitude is 3.4028235e+38)");
      // An integer array's value is exact or refused (16777217 became
      // 16777216 without a word): float32 holds every integer up to 2^24,
      // larger ones only where their low bits are zero.
      if (element.isInteger && !integerIsExactFloat(element))
        throw bad("is not exact in float32 (the input is f32, which holds "
                  "every integer up to 16777216 = 2^24, larger ones only "
                  "when even enough); give float32 values if rounding is "
                  "meant");
      result.as<float>()[i] = value;
      break;
    }
    case DType::I32: {
      if (!element.isInteger && (!std::isfinite(element.real) ||
                                 element.real != std::floor(element.real)))
        throw bad("is not an integer (the input is i32)");
      double asReal =
          element.isInteger ? double(element.integer) : element.real;
      if (element.tooLarge || asReal < double(INT32_MIN) ||
          asReal > double(INT32_MAX))
        throw bad("does not fit int32");
      result.as<int32_t>()[i] =
          element.isInteger ? int32_t(element.integer) : int32_t(element.real);
      break;
    }
    case DType::Bool: {
      double value = element.isInteger ? double(element.integer) : element.real;
      if (element.tooLarge || (value != 0.0 && value != 1.0))
        throw bad("is not 0 or 1 (the input is bool)");
      result.as<uint8_t>()[i] = value != 0.0;
      break;
    }
    default:
      throw std::logic_error("convertTensor: unsupported target dtype");
    }
  }
  return result;
}

Tensor parseTextTensor(const std::string &text, const InputSource &source,
                       DType dtype, size_t rank, std::optional<int64_t> pad) {
  if (rank > 2)
    throw InputError(source.describe() + ": the input has rank " +
                     std::to_string(rank) +
                     " but text files hold rank 0, 1 or 2 data; use an .npy "
                     "file");
  std::vector<std::vector<double>> rows;
  std::vector<int> lineNumbers;
  // A UTF-8 byte order mark at the start is no number (driver.md: every
  // text file the driver reads drops it).
  size_t pos =
      text.compare(0, kUtf8ByteOrderMark.size(), kUtf8ByteOrderMark) == 0
          ? kUtf8ByteOrderMark.size()
          : 0;
  int lineNumber = 0;
  int blankLine = 0; ///< the first blank line so far, or 0
  bool wantInteger = dtype != DType::F32;
  while (pos < text.size()) {
    // A line ends at LF, CRLF or a lone CR, as the driver's other text
    // inputs read them (a lone-CR file was one row of all the values).
    size_t end = text.find_first_of("\r\n", pos);
    if (end == std::string::npos)
      end = text.size();
    else if (text[end] == '\r' && end + 1 < text.size() &&
             text[end + 1] == '\n')
      ++end; // the CR of a CRLF is a space before the LF
    ++lineNumber;
    std::vector<double> row;
    size_t i = pos;
    while (i < end) {
      while (i < end && std::isspace(static_cast<unsigned char>(text[i])))
        ++i;
      if (i >= end)
        break;
      size_t tokenEnd = i;
      while (tokenEnd < end &&
             !std::isspace(static_cast<unsigned char>(text[tokenEnd])))
        ++tokenEnd;
      std::string_view token(text.data() + i, tokenEnd - i);
      const char *first = token.data();
      if (!token.empty() && token[0] == '+')
        ++first;
      double value = 0;
      auto parsed = std::from_chars(first, token.data() + token.size(), value);
      if (parsed.ec != std::errc() || parsed.ptr != token.data() + token.size())
        throw InputError(
            source.describe() + " line " + std::to_string(lineNumber) + ": '" +
            printable(token) + "' is not a number" +
            (token.find(kUtf8ByteOrderMark) != std::string_view::npos
                 ? " (it holds a UTF-8 byte order mark: files joined with "
                   "cat keep each one's; remove them)"
                 : ""));
      if (wantInteger && value != std::floor(value))
        throw InputError(source.describe() + " line " +
                         std::to_string(lineNumber) + ": '" + printable(token) +
                         "' is not an integer (the input is " +
                         dtypeName(dtype) + ")");
      row.push_back(value);
      i = tokenEnd;
    }
    if (!row.empty()) {
      // A blank line before a row would drop a row silently: the outputs'
      // rows would no longer be the file's lines.
      if (blankLine)
        throw InputError(source.describe() + " line " +
                         std::to_string(blankLine) +
                         " is blank, before the row of line " +
                         std::to_string(lineNumber) +
                         ": a row a line, every row with its values (blank "
                         "lines only at the end); remove the line");
      rows.push_back(std::move(row));
      lineNumbers.push_back(lineNumber);
    } else if (!blankLine) {
      blankLine = lineNumber;
    }
    pos = end + 1;
  }
  if (rows.empty())
    throw InputError(source.describe() + ": the file holds no values");

  size_t width = 0;
  bool ragged = false;
  for (const auto &row : rows) {
    ragged |= width != 0 && row.size() != width;
    width = std::max(width, row.size());
  }
  if (ragged && !(dtype == DType::I32 && pad && source.raggedRefusal.empty())) {
    size_t odd = 1;
    while (rows[odd].size() == rows[0].size())
      ++odd;
    throw InputError(
        source.describe() + ": line " + std::to_string(lineNumbers[odd]) +
        " has " + std::to_string(rows[odd].size()) + " values but line " +
        std::to_string(lineNumbers[0]) + " has " +
        std::to_string(rows[0].size()) +
        (!source.raggedRefusal.empty() ? " (" + source.raggedRefusal + ")"
         : dtype == DType::I32
             ? std::string(" (ragged rows are padded only when the model's "
                           "config has 'pad')")
             : std::string(" (ragged rows are padded only for token-id "
                           "inputs)")));
  }

  Shape shape{int64_t(rows.size()), int64_t(width)};
  if (rank == 1) {
    if (rows.size() != 1)
      throw InputError(source.describe() + ": the input has rank 1 but the " +
                       "file has " + std::to_string(rows.size()) +
                       " lines; put the values on one line");
    shape = {int64_t(width)};
  } else if (rank == 0) {
    if (rows.size() != 1 || width != 1)
      throw InputError(source.describe() +
                       ": the input is a scalar but the file holds " +
                       std::to_string(rows.size() * width) + " values");
    shape = {};
  }
  // Ragged rows padded to the longest can be far larger than the file.
  Tensor values = allocateTensor(DType::F64, shape, source.describe());
  double *out = values.as<double>();
  source.paddedRowLengths.clear();
  source.paddedRowLines.clear();
  if (ragged) {
    for (const auto &row : rows)
      source.paddedRowLengths.push_back(int64_t(row.size()));
    source.paddedRowLines.assign(lineNumbers.begin(), lineNumbers.end());
  }
  for (const auto &row : rows) {
    for (size_t j = 0; j < width; ++j)
      *out++ = j < row.size() ? row[j] : double(pad.value_or(0));
  }
  return convertTensor(values, dtype, source);
}

Tensor readInputFile(const InputSource &source, DType dtype, size_t rank,
                     std::optional<int64_t> pad,
                     const std::function<void(const Shape &)> &checkShape) {
  std::string content;
  {
    BinaryFile file(source.path);
    char magic[6] = {};
    if (file.size() >= 6)
      file.readAt(0, magic, 6);
    if (std::memcmp(magic, "\x93NUMPY", 6) == 0)
      return convertTensor(readNpy(source.path, checkShape), dtype, source);
    if (source.path.size() >= 4 &&
        source.path.compare(source.path.size() - 4, 4, ".npy") == 0)
      throw InputError("'" + source.path +
                       "' is not a valid .npy file: the magic string "
                       "\\x93NUMPY is missing");
  }
  content = readWholeFile(source.path);
  return parseTextTensor(content, source, dtype, rank, pad);
}

} // namespace txrt::driver
