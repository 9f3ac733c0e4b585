//===- TextCorpusTest.cpp - documents, the token stream, next-token blocks ===//
#include "data/TextCorpus.h"
#include "TestUtil.h"
#include "core/Error.h"

using namespace txrt::driver;

namespace {

TEST(TextCorpusTest, BlankLinesSeparateDocuments) {
  TextCorpus corpus =
      parseTextCorpus("The cat sat.\nOn the mat\n\n  \nA dog.\n", "t.txt");
  ASSERT_EQ(corpus.documents.size(), 2u);
  EXPECT_EQ(joinWords(corpus.documents[0]), "the cat sat . on the mat");
  EXPECT_EQ(joinWords(corpus.documents[1]), "a dog .");
}

TEST(TextCorpusTest, LinesEndAtLfCrlfOrALoneCr) {
  // Old Mac line ends: the file was one line and one document, without a
  // word said.
  for (const char *text :
       {"a b\nc\n\nd\n", "a b\r\nc\r\n\r\nd\r\n", "a b\rc\r\rd\r"}) {
    TextCorpus corpus = parseTextCorpus(text, "t.txt");
    ASSERT_EQ(corpus.documents.size(), 2u) << text;
    EXPECT_EQ(joinWords(corpus.documents[0]), "a b c");
    EXPECT_EQ(corpus.texts[0], "a b c");
    EXPECT_EQ(joinWords(corpus.documents[1]), "d");
  }
  // Line numbers count CR line ends too.
  EXPECT_THROW_MESSAGE(parseTextCorpus("ok\rbad \xff\r", "u.txt"), InputError,
                       "u.txt:2: invalid UTF-8");
}

TEST(TextCorpusTest, ErrorsNameTheFileAndLine) {
  EXPECT_THROW_MESSAGE(parseTextCorpus("\n \n", "e.txt"), InputError,
                       "'e.txt' holds no words");
  EXPECT_THROW_MESSAGE(parseTextCorpus("ok\nbad \xff byte\n", "u.txt"),
                       InputError, "u.txt:2: invalid UTF-8 at byte 5");
  // Every bad line, as predict and --data name them (only the first was).
  EXPECT_THROW_MESSAGE(
      parseTextCorpus(std::string("a \xff\nok\nb \xfe\nc\0d\n", 15), "m.txt"),
      InputError,
      "m.txt:1: invalid UTF-8 at byte 3 of the line (the text must be "
      "UTF-8)\nm.txt:3: invalid UTF-8 at byte 3 of the line (the text must "
      "be UTF-8)\nm.txt:4: ");
}

TEST(TextCorpusTest, AByteOrderMarkAtTheStartIsNoText) {
  // Before, "\xEF\xBB\xBFthe" became a word of its own beside "the".
  TextCorpus corpus = parseTextCorpus("\xEF\xBB\xBFthe cat\nthe\n", "b.txt");
  ASSERT_EQ(corpus.documents.size(), 1u);
  EXPECT_EQ(corpus.documents[0],
            (std::vector<std::string>{"the", "cat", "the"}));
  // Inside the file (files joined with `cat`) it is a blank between
  // words (splitWords), not a word.
  EXPECT_EQ(parseTextCorpus("a\n\xEF\xBB\xBF" "b\n", "c.txt").documents[0],
            (std::vector<std::string>{"a", "b"}));
}

TEST(TextCorpusTest, KeepsEachDocumentsTextAsWritten) {
  // What a SentencePiece tokenizer encodes: cased, punctuation attached,
  // lines joined by spaces, no '\r'.
  TextCorpus corpus =
      parseTextCorpus("The Cat,\r\nsat.\n\n  Dog!\n", "t.txt");
  EXPECT_EQ(corpus.texts,
            (std::vector<std::string>{"The Cat, sat.", "  Dog!"}));
  EXPECT_EQ(corpus.documents.size(), corpus.texts.size());
}

TEST(TextCorpusTest, DocumentsEndWithEndOfText) {
  TextCorpus corpus = parseTextCorpus("a b\n\nb\n", "t.txt");
  Vocabulary vocabulary = Vocabulary::build(corpus.documents, 1, 0);
  std::vector<int32_t> stream = encodeCorpus(corpus, vocabulary);
  int32_t a = vocabulary.id("a"), b = vocabulary.id("b"),
          eos = vocabulary.eosId();
  EXPECT_EQ(stream, (std::vector<int32_t>{a, b, eos, b, eos}));
}

TEST(TextCorpusTest, BlocksAreShiftedByOneAndTheLastIsPadded) {
  // Stream 10..16 (7 tokens, 6 predicted positions), blocks of 4: two
  // blocks, the second with two real positions.
  TokenBlocks blocks({10, 11, 12, 13, 14, 15, 16}, 4, 0);
  ASSERT_EQ(blocks.size(), 2);
  Tensor tokens = blocks.tokens({1, 0});
  Tensor targets = blocks.targets({1, 0});
  ASSERT_EQ(tokens.shape, (Shape{2, 4}));
  std::vector<int32_t> in(tokens.as<int32_t>(), tokens.as<int32_t>() + 8);
  std::vector<int32_t> out(targets.as<int32_t>(), targets.as<int32_t>() + 8);
  EXPECT_EQ(in, (std::vector<int32_t>{14, 15, 0, 0, 10, 11, 12, 13}));
  EXPECT_EQ(out, (std::vector<int32_t>{15, 16, 0, 0, 11, 12, 13, 14}));
  EXPECT_EQ(blocks.targetCount({0, 1}), 6);
}

TEST(TextCorpusTest, ExactMultipleHasNoPaddedBlock) {
  TokenBlocks blocks({1, 2, 3, 4, 5}, 2, 0);
  EXPECT_EQ(blocks.size(), 2);
  EXPECT_EQ(blocks.targetCount({0, 1}), 4);
  EXPECT_EQ(TokenBlocks({7}, 3, 0).size(), 0);
}

} // namespace
