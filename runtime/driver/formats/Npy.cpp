//===- Npy.cpp - NumPy .npy reader and writer -----------------------------===//
//
// The header is a Python literal, not JSON, so it has its own small parser
// here: a dict of string keys whose values are strings, True/False/None,
// integers or tuples of integers. The element data is read straight into
// the tensor's aligned buffer after the size has been checked against the
// file, so a hostile shape cannot trigger a huge allocation.
//
//===----------------------------------------------------------------------===//
#include "formats/Npy.h"
#include "core/Error.h"
#include "formats/FileIO.h"

#include <cstring>
#include <map>
#include <optional>

namespace txrt::driver {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
constexpr uint32_t kMaxHeaderBytes = 1u << 20;

/// A value in the header dict.
struct HeaderValue {
  enum class Kind { String, Bool, None, Integer, Tuple, Other } kind;
  std::string text;
  bool flag = false;
  std::vector<int64_t> integers;
};

/// Parses the Python dict literal of an .npy header.
class HeaderParser {
public:
  HeaderParser(std::string_view text, const std::string &path)
      : text_(text), path_(path) {}

  std::map<std::string, HeaderValue> parseDict() {
    std::map<std::string, HeaderValue> dict;
    skipSpaces();
    expect('{');
    while (true) {
      skipSpaces();
      if (consume('}'))
        break;
      std::string key = parseQuoted();
      skipSpaces();
      expect(':');
      skipSpaces();
      dict[key] = parseValue();
      skipSpaces();
      if (consume(','))
        continue;
      expect('}');
      break;
    }
    return dict;
  }

private:
  [[noreturn]] void fail(const std::string &what) const {
    throw InputError("'" + path_ + "' is not a valid .npy file: header " +
                     what + " at character " + std::to_string(pos_ + 1));
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skipSpaces() {
    while (pos_ < text_.size() && (peek() == ' ' || peek() == '\n'))
      ++pos_;
  }
  bool consume(char c) {
    if (pos_ < text_.size() && peek() == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!consume(c))
      fail(std::string("expects '") + c + "'");
  }

  std::string parseQuoted() {
    char quote = peek();
    if (quote != '\'' && quote != '"')
      fail("expects a quoted string");
    ++pos_;
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != quote)
      ++pos_;
    if (pos_ >= text_.size())
      fail("has an unterminated string");
    return std::string(text_.substr(start, pos_++ - start));
  }

  int64_t parseInteger() {
    size_t start = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() && peek() >= '0' && peek() <= '9') {
      if (__builtin_mul_overflow(value, 10, &value) ||
          __builtin_add_overflow(value, peek() - '0', &value))
        fail("has an integer that is too large");
      ++pos_;
    }
    if (pos_ == start)
      fail("expects an integer");
    consume('L'); // Python 2 long literals in old files
    return value;
  }

  bool startsWith(std::string_view word) const {
    return text_.substr(pos_, word.size()) == word;
  }

  HeaderValue parseValue() {
    HeaderValue value{HeaderValue::Kind::Other, "", false, {}};
    char c = peek();
    if (c == '\'' || c == '"') {
      value.kind = HeaderValue::Kind::String;
      value.text = parseQuoted();
    } else if (startsWith("True") || startsWith("False")) {
      value.kind = HeaderValue::Kind::Bool;
      value.flag = startsWith("True");
      pos_ += value.flag ? 4 : 5;
    } else if (startsWith("None")) {
      value.kind = HeaderValue::Kind::None;
      pos_ += 4;
    } else if (c >= '0' && c <= '9') {
      value.kind = HeaderValue::Kind::Integer;
      value.integers.push_back(parseInteger());
    } else if (c == '(') {
      ++pos_;
      value.kind = HeaderValue::Kind::Tuple;
      while (true) {
        skipSpaces();
        if (consume(')'))
          break;
        value.integers.push_back(parseInteger());
        skipSpaces();
        if (consume(','))
          continue;
        expect(')');
        break;
      }
    } else if (c == '[') {
      // A structured dtype's field list: skip it, balanced, to report it.
      int depth = 0;
      do {
        if (peek() == '[')
          ++depth;
        else if (peek() == ']')
          --depth;
        ++pos_;
      } while (depth > 0 && pos_ < text_.size());
    } else {
      fail("has an unsupported value");
    }
    return value;
  }

  std::string_view text_;
  const std::string &path_;
  size_t pos_ = 0;
};

struct DescrRow {
  const char *code; // without the byte-order character
  DType dtype;
};
constexpr DescrRow kDescrs[] = {
    {"b1", DType::Bool}, {"i1", DType::I8},  {"u1", DType::U8},
    {"i2", DType::I16},  {"u2", DType::U16}, {"i4", DType::I32},
    {"u4", DType::U32},  {"i8", DType::I64}, {"u8", DType::U64},
    {"f2", DType::F16},  {"f4", DType::F32}, {"f8", DType::F64},
};

DType parseDescr(const std::string &descr, const std::string &path) {
  auto unsupported = [&](const std::string &why) {
    return InputError("'" + path + "': unsupported .npy dtype " +
                      quotedForMessage(descr) + why);
  };
  if (descr.size() < 2)
    throw unsupported("");
  char order = descr[0];
  std::string code = descr.substr(1);
  for (const DescrRow &row : kDescrs) {
    if (code != row.code)
      continue;
    if (order == '>' && dtypeSize(row.dtype) > 1)
      throw unsupported(" (big-endian data; save it little-endian, e.g. " +
                        std::string("array.astype('<") + code + "'))");
    if (order != '<' && order != '|' && order != '=' && order != '>')
      throw unsupported("");
    return row.dtype;
  }
  throw unsupported(" (supported: bool, int8..int64, uint8..uint64, "
                    "float16, float32, float64)");
}

std::string descrOf(DType dtype) {
  for (const DescrRow &row : kDescrs)
    if (row.dtype == dtype)
      return (dtypeSize(dtype) == 1 ? "|" : "<") + std::string(row.code);
  return "<f4";
}

uint32_t readLittleEndian(const unsigned char *bytes, int count) {
  uint32_t value = 0;
  for (int i = count - 1; i >= 0; --i)
    value = (value << 8) | bytes[i];
  return value;
}

} // namespace

Tensor readNpy(const std::string &path,
               const std::function<void(const Shape &)> &checkShape) {
  BinaryFile file(path);
  auto invalid = [&](const std::string &why) {
    return InputError("'" + path + "' is not a valid .npy file: " + why);
  };
  unsigned char prefix[12] = {};
  if (file.size() < 10)
    throw invalid("it is too short (" + std::to_string(file.size()) +
                  " bytes)");
  file.readAt(0, prefix, 10);
  if (std::memcmp(prefix, kMagic, kMagicSize) != 0)
    throw invalid("the magic string \\x93NUMPY is missing");
  int major = prefix[6];
  uint64_t headerStart;
  uint32_t headerBytes;
  if (major == 1) {
    headerBytes = readLittleEndian(prefix + 8, 2);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    file.readAt(0, prefix, 12);
    headerBytes = readLittleEndian(prefix + 8, 4);
    headerStart = 12;
  } else {
    throw invalid("unsupported format version " + std::to_string(major) + "." +
                  std::to_string(int(prefix[7])));
  }
  if (headerBytes > kMaxHeaderBytes)
    throw invalid("the header claims " + std::to_string(headerBytes) +
                  " bytes");
  std::string header(headerBytes, '\0');
  file.readAt(headerStart, header.data(), header.size());

  auto dict = HeaderParser(header, path).parseDict();
  auto descr = dict.find("descr");
  auto fortran = dict.find("fortran_order");
  auto shapeEntry = dict.find("shape");
  if (descr == dict.end() || fortran == dict.end() || shapeEntry == dict.end())
    throw invalid("the header lacks 'descr', 'fortran_order' or 'shape'");
  if (descr->second.kind != HeaderValue::Kind::String)
    throw invalid("structured dtypes are not supported");
  if (fortran->second.kind != HeaderValue::Kind::Bool)
    throw invalid("'fortran_order' is not True or False");
  if (fortran->second.flag)
    throw InputError("'" + path +
                     "' is in Fortran order; only C order is supported (save "
                     "np.ascontiguousarray(array))");
  if (shapeEntry->second.kind != HeaderValue::Kind::Tuple)
    throw invalid("'shape' is not a tuple");
  DType dtype = parseDescr(descr->second.text, path);
  Shape shape = shapeEntry->second.integers;
  if (checkShape)
    checkShape(shape);

  std::optional<int64_t> bytes =
      checkedByteSize(shape, int64_t(dtypeSize(dtype)));
  if (!bytes)
    throw invalid("the shape " + formatShape(shape) + " is too large");
  uint64_t dataStart = headerStart + headerBytes;
  uint64_t available = file.size() - dataStart;
  if (uint64_t(*bytes) > available)
    throw InputError(
        "'" + path + "' is truncated: shape " + formatShape(shape) + " of " +
        dtypeName(dtype) + " needs " + std::to_string(*bytes) +
        " data bytes but the file has " + std::to_string(available));
  if (uint64_t(*bytes) < available)
    throw invalid("it has " + std::to_string(available - uint64_t(*bytes)) +
                  " bytes after the data of shape " + formatShape(shape));
  Tensor tensor(dtype, shape);
  file.readAt(dataStart, tensor.data(), tensor.byteSize());
  return tensor;
}

std::string encodeNpyHeader(const Tensor &tensor) {
  std::string shape = "(";
  for (size_t i = 0; i < tensor.shape.size(); ++i)
    shape += (i ? ", " : "") + std::to_string(tensor.shape[i]);
  if (tensor.shape.size() == 1)
    shape += ",";
  shape += ")";
  std::string dict = "{'descr': '" + descrOf(tensor.dtype) +
                     "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces so the data starts at a multiple of 64, then '\n'.
  auto paddedTotal = [&](size_t prefix) {
    return (prefix + dict.size() + 1 + 63) / 64 * 64;
  };
  bool version2 = paddedTotal(10) - 10 > 65535;
  size_t prefix = version2 ? 12 : 10;
  size_t total = paddedTotal(prefix);
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict += '\n';

  std::string out(kMagic, kMagicSize);
  out += char(version2 ? 2 : 1);
  out += char(0);
  uint32_t length = uint32_t(dict.size());
  for (size_t i = 0; i < (version2 ? 4u : 2u); ++i)
    out += char((length >> (8 * i)) & 0xFF);
  return out + dict;
}

std::string encodeNpy(const Tensor &tensor) {
  std::string out = encodeNpyHeader(tensor);
  out.append(static_cast<const char *>(tensor.data()), tensor.byteSize());
  return out;
}

void writeNpy(const std::string &path, const Tensor &tensor) {
  AtomicFileWriter writer(path);
  writer.write(encodeNpyHeader(tensor));
  writer.write(tensor.data(), tensor.byteSize());
  writer.commit();
}

} // namespace txrt::driver
