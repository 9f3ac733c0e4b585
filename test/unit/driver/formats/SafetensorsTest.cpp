//===- SafetensorsTest.cpp - safetensors round trips and corrupt files ----===//
#include "formats/Safetensors.h"
#include "core/Error.h"
#include "TestUtil.h"

#include <cstring>
#include <filesystem>

using namespace txrt::driver;
using namespace txrt_driver_test;

namespace {

std::string withLength(const std::string &header, const std::string &data) {
  std::string out;
  uint64_t length = header.size();
  for (int i = 0; i < 8; ++i)
    out += char((length >> (8 * i)) & 0xFF);
  return out + header + data;
}

TEST(SafetensorsTest, RoundTripsTensorsAndMetadata) {
  ScratchDir dir;
  std::vector<float> a = {1, 2, 3, 4, 5, 6};
  std::vector<int32_t> b = {-1, 7};
  uint8_t c[3] = {1, 0, 1};
  double d = 2.5;
  std::string path = dir.file("w.safetensors");
  writeSafetensors(path,
                   {{"layer.a", DType::F32, {2, 3}, a.data()},
                    {"b", DType::I32, {2}, b.data()},
                    {"mask", DType::Bool, {3}, c},
                    {"scalar", DType::F64, {}, &d}},
                   {{"format", "txc"}, {"step", "12"}});
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));

  SafetensorsReader reader(path);
  ASSERT_EQ(reader.tensors().size(), 4u);
  EXPECT_EQ(reader.metadata(),
            (SafetensorsMetadata{{"format", "txc"}, {"step", "12"}}));
  const SafetensorsEntry *entry = reader.find("layer.a");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->dtype, "F32");
  EXPECT_EQ(entry->shape, (Shape{2, 3}));
  std::vector<float> readA(6);
  reader.read(*entry, readA.data());
  EXPECT_EQ(readA, a);
  std::vector<int32_t> readB(2);
  reader.read(*reader.find("b"), readB.data());
  EXPECT_EQ(readB, b);
  EXPECT_EQ(reader.find("mask")->dtype, "BOOL");
  EXPECT_EQ(reader.find("scalar")->shape, Shape{});
  double readD = 0;
  reader.read(*reader.find("scalar"), &readD);
  EXPECT_EQ(readD, 2.5);
  EXPECT_EQ(reader.find("nothing"), nullptr);

  // The header is padded to 8 bytes, so the data section is aligned.
  std::string bytes = readFile(path);
  uint64_t headerBytes = 0;
  std::memcpy(&headerBytes, bytes.data(), 8);
  EXPECT_EQ(headerBytes % 8, 0u);
  EXPECT_EQ(bytes.size(), 8 + headerBytes + 24 + 8 + 3 + 8);
}

TEST(SafetensorsTest, EveryTensorIsReadAgainstItsChecksum) {
  ScratchDir dir;
  std::vector<float> a(1000), b(3);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = float(i) * 0.5f;
  b = {7, 8, 9};
  std::string path = dir.file("c.safetensors");
  writeSafetensors(path, {{"a", DType::F32, {1000}, a.data()},
                          {"b", DType::F32, {3}, b.data()}},
                   {{"step", "4"}});
  {
    SafetensorsReader reader(path);
    // The checksums are the format's, not the caller's metadata.
    EXPECT_EQ(reader.metadata(), (SafetensorsMetadata{{"step", "4"}}));
    EXPECT_TRUE(reader.find("a")->checksum.has_value());
    EXPECT_TRUE(reader.find("b")->checksum.has_value());
    std::vector<float> read(1000);
    reader.read(*reader.find("a"), read.data());
    EXPECT_EQ(read, a);
  }
  // One bit of a's data flipped on disk (a disk, a copy, an editor): a is
  // refused with the file and the tensor named, b still reads.
  std::string bytes = readFile(path);
  uint64_t headerBytes = 0;
  std::memcpy(&headerBytes, bytes.data(), 8);
  bytes[8 + headerBytes + 1234] ^= 0x10;
  writeFile(path, bytes);
  SafetensorsReader reader(path);
  std::vector<float> read(1000);
  EXPECT_THROW_MESSAGE(reader.read(*reader.find("a"), read.data()), InputError,
                       "'" + path + "' is damaged: the bytes of tensor 'a' "
                       "do not match the checksum written with them",
                       "remove 'checksums' from its __metadata__");
  std::vector<float> readB(3);
  reader.read(*reader.find("b"), readB.data());
  EXPECT_EQ(readB, b);
}

TEST(SafetensorsTest, TheMetadataIsCheckedWhenTheFileIsOpened) {
  // The tokenizer and the training position live in __metadata__: a byte
  // changed there ("te amo" -> "ue amo") loaded silently before.
  ScratchDir dir;
  std::string path = dir.file("c.safetensors");
  float x = 1;
  // A value that is not UTF-8 is written with U+FFFD: no false alarm.
  writeSafetensors(path, {{"x", DType::F32, {1}, &x}},
                   {{"tokenizer", "te amo"}, {"data", "d\xff.tsv"}});
  EXPECT_EQ(*SafetensorsReader(path).metadataValue("tokenizer"), "te amo");
  std::string bytes = readFile(path);
  size_t at = bytes.find("te amo");
  ASSERT_NE(at, std::string::npos);
  bytes[at] = 'u';
  writeFile(path, bytes);
  EXPECT_THROW_MESSAGE(SafetensorsReader{path}, InputError,
                       "'" + path + "' is damaged: its __metadata__",
                       "does not match the checksum written with it",
                       "remove 'checksums' from its __metadata__");
  // Without tensors the metadata is still checked.
  writeSafetensors(path, {}, {{"step", "4"}});
  bytes = readFile(path);
  bytes[bytes.find("\"4\"") + 1] = '5';
  writeFile(path, bytes);
  EXPECT_THROW_MESSAGE(SafetensorsReader{path}, InputError,
                       "its __metadata__");
}

TEST(SafetensorsTest, AChecksumsTableMustListEveryTensorAndNoOther) {
  // The table has no checksum of its own: one byte of a name in it
  // changed ("b" -> "c") left tensor b read unchecked, so b's bytes could
  // be damaged too and load silently (a translate model gave other
  // answers, exit 0).
  ScratchDir dir;
  std::string path = dir.file("c.safetensors");
  float a[2] = {1, 2}, b[2] = {3, 4};
  writeSafetensors(path,
                   {{"a", DType::F32, {2}, a}, {"bb", DType::F32, {2}, b}},
                   {{"step", "4"}});
  std::string bytes = readFile(path);
  size_t at = bytes.find("\\\"bb\\\"");
  ASSERT_NE(at, std::string::npos);
  std::string renamed = bytes;
  renamed[at + 3] = 'c'; // "bb" -> "bc" in the table only
  writeFile(path, renamed);
  EXPECT_THROW_MESSAGE(SafetensorsReader{path}, InputError,
                       "'" + path +
                           "' is damaged: its checksums list a "
                           "tensor 'bc' that the file does not hold",
                       "remove 'checksums' from its __metadata__");
  // A tensor the table does not list (added, or renamed, by hand).
  float x[2] = {1, 2};
  writeFile(
      path,
      withLength(
          R"({"__metadata__":{"checksums":"{\"x\":\"0123456789abcdef\"}"},)"
          R"("x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
          R"("y":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
          std::string(reinterpret_cast<const char *>(x), 8)));
  EXPECT_THROW_MESSAGE(SafetensorsReader{path}, InputError,
                       "is damaged: tensor 'y' has no entry in the checksums "
                       "written with the file");
}

TEST(SafetensorsTest, FilesWithoutChecksumsAreReadUnchecked) {
  // Other writers (PyTorch's safetensors, older txc) record none.
  ScratchDir dir;
  std::string path = dir.file("plain.safetensors");
  float x[2] = {1, 2};
  std::string data(reinterpret_cast<const char *>(x), sizeof(x));
  writeFile(path,
            withLength(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                       data));
  SafetensorsReader reader(path);
  EXPECT_FALSE(reader.find("x")->checksum.has_value());
  float read[2] = {0, 0};
  reader.read(*reader.find("x"), read);
  EXPECT_EQ(read[1], 2.0f);
}

TEST(SafetensorsTest, MalformedChecksumsAreNamed) {
  ScratchDir dir;
  for (const char *table :
       {R"(not json)", R"([1])", R"({\"x\": 5})", R"({\"x\": \"12\"})",
        R"({\"x\": \"0123456789ABCDEF\"})"}) {
    std::string path = dir.file("m.safetensors");
    writeFile(path, withLength(std::string(R"({"__metadata__":{"checksums":")") +
                                   table + "\"}}",
                               ""));
    EXPECT_THROW_MESSAGE(SafetensorsReader reader(path), InputError,
                         "__metadata__ 'checksums' is not a JSON object of "
                         "16-hex-digit strings");
  }
}

TEST(SafetensorsTest, LooksLikeSafetensorsOnlyForTheirHead) {
  // What outputs that write something else must not replace.
  ScratchDir dir;
  float x = 1;
  writeSafetensors(dir.file("w.safetensors"), {{"x", DType::F32, {1}, &x}});
  EXPECT_TRUE(looksLikeSafetensors(dir.file("w.safetensors")));
  writeFile(dir.file("loss.csv"), "step,loss\n1,2.5\n");
  EXPECT_FALSE(looksLikeSafetensors(dir.file("loss.csv")));
  writeFile(dir.file("short"), withLength("{", ""));
  EXPECT_FALSE(looksLikeSafetensors(dir.file("short")));
  // A header length past the end of the file.
  writeFile(dir.file("long"), withLength("{}", "").substr(0, 8) + "{}");
  std::string bytes = readFile(dir.file("long"));
  bytes[0] = char(0x7f);
  writeFile(dir.file("long"), bytes);
  EXPECT_FALSE(looksLikeSafetensors(dir.file("long")));
  EXPECT_FALSE(looksLikeSafetensors(dir.path()));
  EXPECT_FALSE(looksLikeSafetensors(dir.file("missing")));
}

TEST(SafetensorsTest, WriterRejectsDuplicateNames) {
  ScratchDir dir;
  float x = 0;
  EXPECT_THROW(
      writeSafetensors(dir.file("d.safetensors"), {{"a", DType::F32, {1}, &x},
                                                   {"a", DType::F32, {1}, &x}}),
      std::invalid_argument);
  EXPECT_FALSE(std::filesystem::exists(dir.file("d.safetensors.tmp")));
}

TEST(SafetensorsTest, WriteReplacesAtomically) {
  ScratchDir dir;
  std::string path = dir.file("w.safetensors");
  float one = 1, two = 2;
  writeSafetensors(path, {{"x", DType::F32, {1}, &one}});
  writeSafetensors(path, {{"x", DType::F32, {1}, &two}});
  SafetensorsReader reader(path);
  float value = 0;
  reader.read(*reader.find("x"), &value);
  EXPECT_EQ(value, 2.0f);
  EXPECT_THROW_MESSAGE(writeSafetensors(dir.file("missing-dir/w.safetensors"),
                                        {{"x", DType::F32, {1}, &one}}),
                       InputError, "cannot create",
                       "missing-dir/w.safetensors.tmp");
}

TEST(SafetensorsTest, WriterRefusesAHeaderNoReaderOpens) {
  // A header over kMaxSafetensorsHeaderBytes (a vocabulary of huge words
  // in the metadata) would replace a good file with one no reader opens:
  // refused before anything is written, the old file left as it was.
  ScratchDir dir;
  std::string path = dir.file("w.safetensors");
  float one = 1;
  writeSafetensors(path, {{"x", DType::F32, {1}, &one}});
  std::string huge(kMaxSafetensorsHeaderBytes, 'w');
  EXPECT_THROW_MESSAGE(
      writeSafetensors(path, {{"x", DType::F32, {1}, &one}},
                       {{"small", "1"}, {"tokenizer", huge}}),
      ResourceError, "its header would be", "'tokenizer' alone 100000000",
      "is left as it was");
  SafetensorsReader reader(path);
  EXPECT_TRUE(reader.find("x"));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST(SafetensorsTest, RejectsCorruptFiles) {
  ScratchDir dir;
  const std::string good =
      R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  std::string hugeLength(8, '\0');
  hugeLength[4] = 1; // 2^32 bytes
  struct Case {
    std::string name, content;
    std::vector<std::string> fragments;
  };
  const std::vector<Case> cases = {
      {"empty", "", {"is truncated", "less than the 8-byte header length"}},
      {"short-header",
       withLength(good, "").substr(0, 20),
       {"is truncated", "the header needs"}},
      {"short-data",
       withLength(good, std::string(5, '\0')),
       {"is truncated", "tensor 'x' needs data bytes [0, 8)",
        "data section has 5 bytes"}},
      {"huge-header", hugeLength + "{}", {"header is too large", "4294967296"}},
      // `--load train.tsv`: named as text, not as a header of 8.7e18 bytes.
      {"text",
       "i love you\tte amo\n",
       {"is not a safetensors file: it begins with text ('i love y')"}},
      // Its line break escaped: the message was two lines, the second
      // with an error: prefix of its own.
      {"text-lines",
       "a b\tc\nd e\tf\n",
       {"it begins with text ('a b\\tc\\nd ')"}},
      // What PyTorch users give first (their first 8 bytes read as a huge
      // header length): named by their format.
      {"torch-zip",
       std::string("PK\x03\x04\x14\x00\x00\x00", 8) + std::string(64, 'z'),
       {"is a zip archive (PyTorch's torch.save, or numpy's .npz), not a "
        "safetensors file; save the parameters with "
        "safetensors.torch.save_file({n: p.detach() for n, p in "
        "model.named_parameters()}, 'W.safetensors')"}},
      {"torch-pickle",
       std::string("\x80\x02\x8a\x0alZ\xfc", 8) + std::string(64, 'p'),
       {"is a Python pickle (PyTorch's torch.save in its legacy format)"}},
      {"numpy",
       std::string("\x93NUMPY\x01\x00", 8) + std::string(64, 'n'),
       {"is a numpy .npy array, not a safetensors file"}},
      // Names printed as they were: a line break split the error in two,
      // an escape sequence reached the terminal, 100 kB names one line.
      {"control-name",
       withLength(R"({"a\nb\u001b[31mred":{"dtype":"F32","shape":[2],)"
                  R"("data_offsets":[0,8]}})",
                  std::string(8, '\0')),
       {"a tensor name has a control character: 'a\\nb\\x1b[31mred' "
        "(parameter names are printable and at most 1024 bytes)"}},
      {"long-name",
       withLength("{\"" + std::string(5000, 'w') +
                      R"(":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                  std::string(8, '\0')),
       {"a tensor name is 5000 bytes long: 'wwww", "www...'"}},
      {"not-json", withLength("{\"x\": [1,}", ""), {"invalid header JSON"}},
      // A damaged length cuts the JSON short: said so, and the parser's
      // quote of what it read is cut (a checksum table was 9 KB on a line).
      {"cut-json",
       withLength("{\"x\": [1,", ""),
       {"its 8-byte header length (9) does not end the JSON header: the "
        "length or the header is damaged"}},
      {"cut-long-json",
       withLength(
           "{\"__metadata__\":{\"checksums\":\"" + std::string(5000, 'a'), ""),
       {"does not end the JSON header", "...)"}},
      {"not-object", withLength("[1, 2]", ""), {"not a JSON object"}},
      {"unknown-dtype",
       withLength(R"({"x":{"dtype":"Q7","shape":[2],"data_offsets":[0,8]}})",
                  std::string(8, '\0')),
       {"tensor 'x' has an unknown dtype 'Q7'"}},
      {"size-mismatch",
       withLength(R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})",
                  std::string(8, '\0')),
       {"tensor 'x' has 8 data bytes but shape [3] of F32 needs 12"}},
      {"bad-offsets",
       withLength(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})",
                  std::string(8, '\0')),
       {"tensor 'x' has invalid data_offsets"}},
      {"bad-shape",
       withLength(R"({"x":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})",
                  std::string(8, '\0')),
       {"tensor 'x' has a shape that is not a list"}},
      {"no-dtype",
       withLength(R"({"x":{"shape":[2]}})", ""),
       {"tensor 'x' lacks a string 'dtype'"}},
      {"bad-metadata",
       withLength(R"({"__metadata__":{"step":3}})", ""),
       {"__metadata__ value 'step' is not a string"}},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    std::string path = dir.file(c.name + ".safetensors");
    writeFile(path, c.content);
    try {
      SafetensorsReader reader(path);
      ADD_FAILURE() << "no error";
    } catch (const InputError &error) {
      std::string message = error.what();
      EXPECT_NE(message.find(path), std::string::npos) << message;
      for (const std::string &fragment : c.fragments)
        EXPECT_NE(message.find(fragment), std::string::npos)
            << message << "\nmissing: " << fragment;
      EXPECT_LT(message.size(), 400u + path.size()) << message;
    }
  }
  EXPECT_THROW_MESSAGE(SafetensorsReader(dir.file("absent.safetensors")),
                       InputError, "cannot open", "No such file");
}

TEST(SafetensorsTest, TensorsMustTileTheDataSection) {
  // Each range is inside the data section and has the right size, but the
  // tensors overlap, leave a gap, are shifted, or leave bytes unused: one
  // tensor would be read from another's bytes.
  ScratchDir dir;
  auto two = [](const char *a, const char *b) {
    return std::string(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":)") +
           a + R"(},"b":{"dtype":"F32","shape":[2],"data_offsets":)" + b + "}}";
  };
  struct Case {
    std::string name, content, fragment;
  };
  const std::vector<Case> cases = {
      {"overlap", withLength(two("[0,8]", "[4,12]"), std::string(12, '\0')),
       "the data_offsets of tensors 'a' [0, 8) and 'b' [4, 12) overlap"},
      {"same", withLength(two("[0,8]", "[0,8]"), std::string(8, '\0')),
       "the data_offsets of tensors 'a' [0, 8) and 'b' [0, 8) overlap"},
      // A tensor given another's offsets leaves a gap where its bytes were:
      // the overlap is named, not the fine tensor after the gap.
      {"aliased",
       withLength(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},)"
                  R"("b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},)"
                  R"("c":{"dtype":"F32","shape":[2],"data_offsets":[16,24]}})",
                  std::string(24, '\0')),
       "the data_offsets of tensors 'a' [8, 16) and 'b' [8, 16) overlap"},
      {"shifted",
       withLength(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                  std::string(12, '\0')),
       "tensor 'a' has data_offsets [4, 12) but the previous tensor ends at 0"},
      {"gap", withLength(two("[0,8]", "[12,20]"), std::string(20, '\0')),
       "tensor 'b' has data_offsets [12, 20) but the previous tensor ends at "
       "8"},
      {"trailing", withLength(two("[0,8]", "[8,16]"), std::string(20, '\0')),
       "the data section has 20 bytes but its tensors cover 16"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    std::string path = dir.file(c.name + ".safetensors");
    writeFile(path, c.content);
    EXPECT_THROW_MESSAGE(SafetensorsReader reader(path), InputError,
                         "'" + path + "' is not a valid safetensors file",
                         c.fragment);
  }
  // Back to back in any header order, zero-size tensors anywhere: fine.
  writeFile(
      dir.file("ok.safetensors"),
      withLength(R"({"b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},)"
                 R"("e":{"dtype":"F32","shape":[0],"data_offsets":[8,8]},)"
                 R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                 std::string(16, '\0')));
  EXPECT_NO_THROW(SafetensorsReader(dir.file("ok.safetensors")));
}

} // namespace
