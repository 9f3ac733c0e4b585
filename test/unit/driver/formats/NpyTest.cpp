//===- NpyTest.cpp - .npy round trips, NumPy's own files, malformed files -===//
#include "formats/Npy.h"
#include "core/Error.h"
#include "TestUtil.h"

#include <cstring>

using namespace txrt::driver;
using namespace txrt_driver_test;

namespace {

TEST(NpyTest, RoundTripsEveryModelDType) {
  ScratchDir dir;
  Tensor f = floatTensor({2, 3}, {1, 2, 3, 4.5f, -5, 6e-7f});
  Tensor i = intTensor({4}, {7, -8, 2147483647, 0});
  Tensor b(DType::Bool, {2, 1, 2});
  b.as<uint8_t>()[1] = b.as<uint8_t>()[2] = 1;
  Tensor scalar = floatTensor({}, {3.25f});
  Tensor empty(DType::F32, {0, 5});
  for (Tensor *tensor : {&f, &i, &b, &scalar, &empty}) {
    std::string path = dir.file("t.npy");
    writeNpy(path, *tensor);
    Tensor back = readNpy(path);
    EXPECT_EQ(back.dtype, tensor->dtype);
    EXPECT_EQ(back.shape, tensor->shape);
    ASSERT_EQ(back.byteSize(), tensor->byteSize());
    if (back.byteSize() > 0) {
      EXPECT_EQ(std::memcmp(back.data(), tensor->data(), back.byteSize()), 0);
    }
  }
}

TEST(NpyTest, HeaderIsPaddedTo64Bytes) {
  std::string encoded = encodeNpy(floatTensor({2, 3}, {1, 2, 3, 4, 5, 6}));
  std::string header = encodeNpyHeader(Tensor(DType::F32, {2, 3}));
  EXPECT_EQ(header.size() % 64, 0u);
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ(encoded.size(), header.size() + 24);
  EXPECT_NE(header.find("{'descr': '<f4', 'fortran_order': False, "
                        "'shape': (2, 3), }"),
            std::string::npos);
  EXPECT_NE(encodeNpyHeader(Tensor(DType::Bool, {5})).find("'|b1'"),
            std::string::npos);
  EXPECT_NE(encodeNpyHeader(Tensor(DType::I32, {5})).find("(5,)"),
            std::string::npos);
  EXPECT_NE(encodeNpyHeader(Tensor(DType::I32, {})).find("()"),
            std::string::npos);
}

TEST(NpyTest, RejectsMalformedFiles) {
  ScratchDir dir;
  std::string good = encodeNpy(floatTensor({2, 2}, {1, 2, 3, 4}));
  auto withHeader = [&](const std::string &dict) {
    std::string header = dict;
    header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
    header += '\n';
    std::string out = "\x93NUMPY";
    out += '\x01';
    out += '\x00';
    out += char(header.size() & 0xFF);
    out += char(header.size() >> 8);
    return out + header;
  };
  struct Case {
    std::string name, content, fragment;
  };
  const std::vector<Case> cases = {
      {"short.npy", "\x93NUM", "too short"},
      {"magic.npy", "NOTNUMPYDATA", "magic string"},
      {"truncated.npy", good.substr(0, good.size() - 3), "is truncated"},
      {"extra.npy", good + "xx", "bytes after the data"},
      {"version.npy",
       [&] {
         std::string v = good;
         v[6] = 9;
         return v;
       }(),
       "unsupported format version 9"},
      {"fortran.npy",
       withHeader(
           "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }") +
           std::string(16, '\0'),
       "Fortran order"},
      {"bigendian.npy",
       withHeader("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }") +
           std::string(4, '\0'),
       "big-endian"},
      {"complex.npy",
       withHeader("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }") +
           std::string(8, '\0'),
       "unsupported .npy dtype '<c8'"},
      // A NUL in the descr ended the message there (what() is a C string).
      {"nul.npy",
       withHeader(std::string("{'descr': '<i4") + '\0' +
                  "', 'fortran_order': False, 'shape': (1,), }") +
           std::string(4, '\0'),
       "unsupported .npy dtype '<i4\\x00' (supported:"},
      {"structured.npy",
       withHeader("{'descr': [('a', '<f4')], 'fortran_order': False, "
                  "'shape': (1,), }") +
           std::string(4, '\0'),
       "structured dtypes"},
      {"noshape.npy", withHeader("{'descr': '<f4', 'fortran_order': False}"),
       "lacks"},
      {"badheader.npy", withHeader("{'descr' '<f4'}"), "header expects ':'"},
      {"huge.npy",
       withHeader("{'descr': '<f4', 'fortran_order': False, 'shape': "
                  "(100000000000, 100000000000), }"),
       "too large"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    std::string path = dir.file(c.name);
    writeFile(path, c.content);
    EXPECT_THROW_MESSAGE(readNpy(path), InputError, c.fragment, path);
  }
  EXPECT_THROW_MESSAGE(readNpy(dir.file("absent.npy")), InputError,
                       "cannot open", "No such file");
  EXPECT_THROW_MESSAGE(readNpy(dir.path()), InputError, "is a directory");
}

/// Files written by NumPy itself: every dtype, both header versions, and
/// the layouts NumPy produces that the reader must refuse.
TEST(NpyTest, ReadsFilesWrittenByNumPy) {
  const std::string &python = numpyPython();
  if (python.empty())
    GTEST_SKIP() << "no python3 with numpy";
  ScratchDir dir;
  std::string script = R"(
import sys, numpy as np
d = sys.argv[1]
a = np.arange(6).reshape(2, 3)
for t in ['int32', 'int64', 'float32', 'float64', 'bool', 'uint8', 'int16']:
    np.save(d + '/' + t + '.npy', (a % 2 if t == 'bool' else a).astype(t))
np.save(d + '/scalar.npy', np.float32(2.5))
with open(d + '/v2.npy', 'wb') as f:
    np.lib.format.write_array(f, a.astype('float32'), version=(2, 0))
np.save(d + '/fortran.npy', np.asfortranarray(a.astype('float32')))
np.save(d + '/big.npy', a.astype('>i4'))
)";
  writeFile(dir.file("make.py"), script);
  CommandResult made =
      runShell(shellQuote(python) + " " + shellQuote(dir.file("make.py")) +
               " " + shellQuote(dir.path()));
  ASSERT_EQ(made.exitCode, 0) << made.out;

  const std::pair<const char *, DType> files[] = {
      {"int32", DType::I32},   {"int64", DType::I64}, {"float32", DType::F32},
      {"float64", DType::F64}, {"bool", DType::Bool}, {"uint8", DType::U8},
      {"int16", DType::I16}};
  for (const auto &[name, dtype] : files) {
    SCOPED_TRACE(name);
    Tensor tensor = readNpy(dir.file(std::string(name) + ".npy"));
    EXPECT_EQ(tensor.dtype, dtype);
    EXPECT_EQ(tensor.shape, (Shape{2, 3}));
  }
  EXPECT_EQ(readNpy(dir.file("int64.npy")).as<int64_t>()[5], 5);
  EXPECT_EQ(readNpy(dir.file("float64.npy")).as<double>()[4], 4.0);
  EXPECT_EQ(readNpy(dir.file("bool.npy")).as<uint8_t>()[1], 1);
  Tensor scalar = readNpy(dir.file("scalar.npy"));
  EXPECT_TRUE(scalar.shape.empty());
  EXPECT_EQ(scalar.as<float>()[0], 2.5f);
  Tensor v2 = readNpy(dir.file("v2.npy"));
  EXPECT_EQ(v2.shape, (Shape{2, 3}));
  EXPECT_EQ(v2.as<float>()[3], 3.0f);
  EXPECT_THROW_MESSAGE(readNpy(dir.file("fortran.npy")), InputError,
                       "Fortran order");
  EXPECT_THROW_MESSAGE(readNpy(dir.file("big.npy")), InputError, "big-endian");
}

/// NumPy reads what the driver writes.
TEST(NpyTest, NumPyReadsWhatWeWrite) {
  const std::string &python = numpyPython();
  if (python.empty())
    GTEST_SKIP() << "no python3 with numpy";
  ScratchDir dir;
  writeNpy(dir.file("f.npy"), floatTensor({2, 2}, {1.5f, -2, 3, 4}));
  writeNpy(dir.file("i.npy"), intTensor({3}, {1, -2, 3}));
  Tensor b(DType::Bool, {2});
  b.as<uint8_t>()[1] = 1;
  writeNpy(dir.file("b.npy"), b);
  writeNpy(dir.file("s.npy"), floatTensor({}, {7}));
  std::string check = R"(
import sys, numpy as np
d = sys.argv[1]
f, i, b, s = (np.load(d + '/' + n + '.npy') for n in 'fibs')
assert f.dtype == np.float32 and f.tolist() == [[1.5, -2], [3, 4]], f
assert i.dtype == np.int32 and i.tolist() == [1, -2, 3], i
assert b.dtype == np.bool_ and b.tolist() == [False, True], b
assert s.shape == () and s == 7, s
print('ok')
)";
  writeFile(dir.file("check.py"), check);
  CommandResult result =
      runShell(shellQuote(python) + " " + shellQuote(dir.file("check.py")) +
               " " + shellQuote(dir.path()));
  EXPECT_EQ(result.exitCode, 0) << result.out;
  EXPECT_EQ(result.out, "ok\n");
}

} // namespace
