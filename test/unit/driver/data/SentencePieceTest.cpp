//===- SentencePieceTest.cpp - training, ids, round trips, bad files ------===//
#include "core/Error.h"
#include "data/SentencePiece.h"
#include "data/Tokenizer.h"
#include "TestUtil.h"

#include <algorithm>

using namespace txrt::driver;
using namespace txrt_driver_test;

namespace {

/// A few hundred sentences from a small grammar (deterministic).
std::vector<std::string> smallCorpus() {
  const char *subjects[] = {"the cat", "a dog", "my friend", "the teacher",
                            "our neighbours", "this translator"};
  const char *verbs[] = {"reads", "writes", "likes", "translates", "sees",
                         "remembers"};
  const char *objects[] = {"the book", "a letter", "long sentences",
                           "the weather report", "old songs", "new words"};
  const char *ends[] = {"today", "every morning", "slowly", "again"};
  std::vector<std::string> sentences;
  for (const char *s : subjects)
    for (const char *v : verbs)
      for (const char *o : objects)
        for (const char *e : ends)
          sentences.push_back(std::string(s) + " " + v + " " + o + " " + e +
                              ".");
  return sentences;
}

SentencePieceOptions options(SentencePieceOptions::Algorithm algorithm,
                             int32_t padId = 0) {
  SentencePieceOptions result;
  result.algorithm = algorithm;
  result.vocabSize = 64;
  result.padId = padId;
  return result;
}

TEST(SentencePieceTest, RoundTripsNormalizedText) {
  for (auto algorithm : {SentencePieceOptions::Algorithm::Unigram,
                         SentencePieceOptions::Algorithm::Bpe}) {
    SentencePieceModel model =
        SentencePieceModel::train(smallCorpus(), options(algorithm));
    EXPECT_EQ(model.size(), 64);
    for (const std::string &text :
         {std::string("the cat reads the book today."),
          std::string("my dog writes new letters slowly."),
          std::string("a dog sees the cat.")}) {
      std::vector<int32_t> ids = model.encode(text);
      EXPECT_FALSE(ids.empty());
      EXPECT_EQ(model.decode(ids), text);
    }
    // Training text becomes fewer pieces than it has characters.
    std::string seen = "the teacher translates the weather report today.";
    EXPECT_LT(model.encode(seen).size(), seen.size() * 2 / 3);
  }
}

// A language model trains its tokenizer on whole documents, one line each;
// SentencePiece's trainer skips a line over 4192 bytes with a log line and
// nothing else, so a long document's words became [UNK]. Long text is cut
// at blanks for training: its words are learned like any other's.
TEST(SentencePieceTest, LongDocumentsAreTrainedOn) {
  std::string longDocument;
  while (longDocument.size() < 20000)
    longDocument += "alpha beta gamma delta ";
  const std::string unbroken(9000, 'q'); // no blank to cut at
  for (auto algorithm : {SentencePieceOptions::Algorithm::Unigram,
                         SentencePieceOptions::Algorithm::Bpe}) {
    SentencePieceOptions settings = options(algorithm);
    settings.vocabSize = 30;
    SentencePieceModel model = SentencePieceModel::train(
        {longDocument, "one two three one two three", unbroken}, settings);
    for (const std::string &text :
         {std::string("alpha beta gamma delta"), std::string("one two three"),
          std::string("qqqq")}) {
      std::vector<int32_t> ids = model.encode(text);
      EXPECT_EQ(std::count(ids.begin(), ids.end(), model.unkId()), 0) << text;
      EXPECT_EQ(model.decode(ids), text);
    }
  }
}

TEST(SentencePieceTest, SpecialsSitAtThePadRule) {
  SentencePieceModel first = SentencePieceModel::train(
      smallCorpus(), options(SentencePieceOptions::Algorithm::Unigram));
  EXPECT_EQ(first.padId(), 0);
  EXPECT_EQ(first.unkId(), 1);
  EXPECT_EQ(first.sosId(), 2);
  EXPECT_EQ(first.eosId(), 3);
  EXPECT_EQ(first.piece(0), "[PAD]");
  EXPECT_EQ(first.piece(1), "[UNK]");
  EXPECT_EQ(first.piece(2), "[SOS]");
  EXPECT_EQ(first.piece(3), "[EOS]");

  SentencePieceModel second = SentencePieceModel::train(
      smallCorpus(), options(SentencePieceOptions::Algorithm::Bpe, 2));
  EXPECT_EQ(second.unkId(), 0);
  EXPECT_EQ(second.sosId(), 1);
  EXPECT_EQ(second.padId(), 2);
  EXPECT_EQ(second.eosId(), 3);

  // Decoding stops at [EOS] and skips [PAD] / [SOS].
  std::vector<int32_t> ids = first.encode("the cat");
  std::vector<int32_t> framed = {first.sosId()};
  framed.insert(framed.end(), ids.begin(), ids.end());
  framed.push_back(first.eosId());
  framed.push_back(ids[0]);
  framed.push_back(first.padId());
  EXPECT_EQ(first.decode(framed), "the cat");
  // A character never seen is [UNK].
  std::vector<int32_t> unknown = first.encode("\xe2\x82\xac");
  EXPECT_NE(std::find(unknown.begin(), unknown.end(), first.unkId()),
            unknown.end());
}

TEST(SentencePieceTest, TrainingIsDeterministicAndSaveLoadKeepsTheBytes) {
  ScratchDir dir;
  auto corpus = smallCorpus();
  auto opts = options(SentencePieceOptions::Algorithm::Unigram);
  SentencePieceModel a = SentencePieceModel::train(corpus, opts);
  SentencePieceModel b = SentencePieceModel::train(corpus, opts);
  EXPECT_EQ(a.bytes(), b.bytes());
  a.save(dir.file("m.model"));
  EXPECT_EQ(readFile(dir.file("m.model")), a.bytes());
  SentencePieceModel loaded = SentencePieceModel::load(dir.file("m.model"));
  EXPECT_EQ(loaded.encode("old songs again."), a.encode("old songs again."));
  EXPECT_EQ(loaded.eosId(), 3);
}

TEST(SentencePieceTest, AlgorithmIsReadBackFromTheModel) {
  // train --resume compares --spm-type with the checkpoint's model by it.
  ScratchDir dir;
  for (auto algorithm : {SentencePieceOptions::Algorithm::Unigram,
                         SentencePieceOptions::Algorithm::Bpe}) {
    SentencePieceModel model =
        SentencePieceModel::train(smallCorpus(), options(algorithm));
    EXPECT_EQ(model.algorithm(), algorithm);
    model.save(dir.file("m.model"));
    EXPECT_EQ(SentencePieceModel::load(dir.file("m.model")).algorithm(),
              algorithm);
  }
}

TEST(SentencePieceTest, BadFilesAndOptionsAreErrors) {
  ScratchDir dir;
  EXPECT_THROW_MESSAGE(SentencePieceModel::load(dir.file("missing.model")),
                       InputError, "missing.model");
  writeFile(dir.file("corrupt.model"), "this is not a protobuf \xff\xff");
  EXPECT_THROW_MESSAGE(SentencePieceModel::load(dir.file("corrupt.model")),
                       InputError,
                       "corrupt.model' is not a SentencePiece model");
  SentencePieceModel model = SentencePieceModel::train(
      smallCorpus(), options(SentencePieceOptions::Algorithm::Unigram));
  std::string truncated = model.bytes().substr(0, model.bytes().size() / 2);
  writeFile(dir.file("truncated.model"), truncated);
  EXPECT_THROW_MESSAGE(SentencePieceModel::load(dir.file("truncated.model")),
                       InputError, "truncated.model'");

  SentencePieceOptions tooBig = options(SentencePieceOptions::Algorithm::Bpe);
  tooBig.vocabSize = 100000;
  EXPECT_THROW_MESSAGE(
      SentencePieceModel::train({"a tiny corpus"}, tooBig), InputError,
      "SentencePiece could not train a 100000-piece model on 1 sentences");
  SentencePieceOptions badPad = options(SentencePieceOptions::Algorithm::Bpe);
  badPad.padId = 4;
  EXPECT_THROW(SentencePieceModel::train(smallCorpus(), badPad),
               std::invalid_argument);
}

} // namespace

TEST(SentencePieceTest, SubwordTokenizerKeepsTheModelThroughItsJson) {
  SentencePieceOptions opts = options(SentencePieceOptions::Algorithm::Unigram);
  Tokenizer tokenizer = Tokenizer::fromSentencePiece(
      SentencePieceModel::train(smallCorpus(), opts));
  ASSERT_TRUE(tokenizer.subwords);
  EXPECT_STREQ(tokenizer.unit(), "pieces");
  EXPECT_EQ(tokenizer.source.size(), opts.vocabSize);
  EXPECT_EQ(tokenizer.source.words(), tokenizer.target.words());
  EXPECT_EQ(tokenizer.source.padId(), 0);
  EXPECT_EQ(tokenizer.source.eosId(), 3);

  // Cased text in, the same text out: no word split, no lowercasing.
  std::string text = smallCorpus().front();
  std::vector<int32_t> ids = tokenizer.encodeSource(text);
  EXPECT_EQ(ids, tokenizer.encodeTarget(text));
  EXPECT_EQ(tokenizer.decodeTarget(ids), text);

  // The checkpoint stores the JSON: the .model bytes travel in it.
  Tokenizer loaded = Tokenizer::fromJson(tokenizer.toJson(), "'t.json'");
  ASSERT_TRUE(loaded.subwords);
  EXPECT_EQ(loaded.subwords->bytes(), tokenizer.subwords->bytes());
  EXPECT_TRUE(loaded.sameVocabularies(tokenizer));
  EXPECT_EQ(loaded.encodeSource(text), ids);

  // A broken base64 payload is an error naming the file.
  std::string json = tokenizer.toJson();
  size_t at = json.find("\"sentencepiece\"");
  ASSERT_NE(at, std::string::npos);
  json.insert(json.find('"', at + 16) + 1, "!");
  EXPECT_THROW(
      {
        try {
          Tokenizer::fromJson(json, "'t.json'");
        } catch (const InputError &error) {
          EXPECT_NE(std::string(error.what()).find("'t.json'"),
                    std::string::npos);
          throw;
        }
      },
      InputError);
}
