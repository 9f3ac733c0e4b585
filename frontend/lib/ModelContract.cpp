//===- ModelContract.cpp - what the executable's driver needs of a spec ---===//
//
// The compiled program's driver (runtime/driver, docs/driver.md) reads some
// config values by name and some entries by name:
//  - `pad` is the id it pads token (i32) inputs with and where its tokenizer
//    puts [PAD];
//  - a `train` entry taking `src` and `tgt_in`, or `encode` taking `src` and
//    `decode` taking `tgt`, make a seq2seq model: its text commands (train,
//    eval, translate, bench) fill the inputs src, tgt, tgt_in and tgt_out
//    with ids of word vocabularies sized by `src_vocab` (src) and
//    `tgt_vocab` (tgt*), or `vocab`, that start with the 4 special tokens
//    [PAD] [UNK] [SOS] [EOS], padded with `pad` (vocabKeyFor in
//    InputValidation.cpp). So the embeddings of those inputs need at least
//    that many rows, and `pad` must be one of them. (`run` checks any input's
//    ids against the table it indexes: other inputs, such as position ids,
//    need nothing here.)
// A spec the driver cannot run that way is an error here, at the config item
// or the embedding concerned, instead of a failure at run time. Sizes that
// are fine for `run` alone (an embedding of one row) are errors only where a
// seq2seq command needs more.
//
//===----------------------------------------------------------------------===//
#include "MLIRGenImpl.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tx;
using namespace txc;
using namespace txc::detail;

namespace {

/// The driver's tokenizer puts these first in every vocabulary
/// (runtime/driver/data/Tokenizer.h, kNumSpecialTokens).
constexpr int64_t kNumSpecialTokens = 4;
constexpr int64_t kMaxTokenId = INT32_MAX;

/// A config value the driver reads as an integer.
struct ConfigInt {
  std::string name;
  int64_t value = 0;
  SourceLoc loc;
};

/// An embedding whose ids are an entry input: what the driver feeds it.
struct InputEmbedding {
  std::string input; // the entry parameter's name
  int64_t rows = 0;  // the table's vocabulary
  SourceLoc loc;
};

class ContractChecker {
public:
  ContractChecker(ModuleOp module, const ast::Module &ast,
                  const ConfigEnv &env, txc::DiagnosticEngine &diags)
      : module(module), env(env), diags(diags) {
    for (const ast::DeclPtr &decl : ast.decls)
      if (auto *config = llvm::dyn_cast_or_null<ast::ConfigDecl>(decl.get()))
        for (const ast::ConfigItem &item : config->items)
          configLocs.emplace(item.name, item.loc);
  }

  void run() {
    std::optional<ConfigInt> pad = readInt("pad", 0, kMaxTokenId,
                                           "a token id",
                                           "the executable pads token inputs "
                                           "with it");
    std::map<std::string, ConfigInt> vocabs;
    for (const char *key : {"src_vocab", "tgt_vocab", "vocab"})
      if (std::optional<ConfigInt> vocab =
              readInt(key, 1, kMaxTokenId, "a vocabulary size",
                      "the executable checks token ids against it"))
        vocabs[key] = *vocab;
    std::string seq2seq = seq2seqReason();
    if (seq2seq.empty())
      return;
    collectEmbeddings();
    const InputEmbedding *smallest = nullptr;
    for (const InputEmbedding &embedding : embeddings) {
      if (const ConfigInt *vocab = vocabFor(embedding.input, vocabs);
          vocab && vocab->value > embedding.rows)
        diags.error(embedding.loc,
                    "the executable accepts ids of '" + embedding.input +
                        "' below config '" + vocab->name + "' = " +
                        std::to_string(vocab->value) +
                        ", but this embedding has " +
                        std::to_string(embedding.rows) + " rows",
                    "give the embedding the vocabulary '" + vocab->name + "'");
      if (!smallest || embedding.rows < smallest->rows)
        smallest = &embedding;
    }
    // Padded positions are looked up too: pad must be a row of every table.
    if (pad && smallest && pad->value >= smallest->rows) {
      diags.error(pad->loc,
                  "config 'pad' = " + std::to_string(pad->value) +
                      " is not an id of the embedding of '" + smallest->input +
                      "' (ids 0.." + std::to_string(smallest->rows - 1) + ")",
                  "the executable pads '" + smallest->input +
                      "' with it; use an id inside the vocabulary");
      diags.note(smallest->loc,
                 "the embedding of '" + smallest->input + "' is here");
    }
    checkSeq2Seq(vocabs, seq2seq);
  }

private:
  /// Reads config `name` (when present) as an integer in [lo, hi]; reports
  /// at its item otherwise.
  std::optional<ConfigInt> readInt(const std::string &name, int64_t lo,
                                   int64_t hi, const std::string &what,
                                   const std::string &why) {
    std::optional<ConstValue> value = env.lookup(name);
    if (!value)
      return std::nullopt;
    SourceLoc loc = configLocs.count(name) ? configLocs[name] : SourceLoc{};
    double number = value->isNumber() ? value->asDouble() : NAN;
    if (!(number >= static_cast<double>(lo) &&
          number <= static_cast<double>(hi) && number == std::floor(number))) {
      diags.error(loc,
                  "config '" + name + "' = " + value->str() + " must be " +
                      what + ", an integer in " + std::to_string(lo) + ".." +
                      std::to_string(hi),
                  why);
      return std::nullopt;
    }
    return ConfigInt{name, static_cast<int64_t>(number), loc};
  }

  void collectEmbeddings() {
    for (auto func : module.getOps<func::FuncOp>()) {
      if (!func->hasAttr("tx.entry") || func.isExternal())
        continue;
      func.walk([&](EmbeddingOp embedding) {
        auto arg = dyn_cast<BlockArgument>(embedding.getIds());
        if (!arg || arg.getOwner() != &func.front())
          return;
        auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                      "tx.name");
        // Only the inputs the text commands fill with token ids.
        if (!name || !llvm::is_contained(
                         {"src", "tgt", "tgt_in", "tgt_out"}, name.getValue()))
          return;
        auto table = cast<RankedTensorType>(embedding.getTable().getType());
        embeddings.push_back({name ? name.str() : "?", table.getDimSize(0),
                              specLocOf(embedding.getLoc())});
      });
    }
  }

  /// The config value the driver checks ids of `input` against
  /// (runtime/driver/data/InputValidation.cpp, vocabKeyFor).
  static const ConfigInt *vocabFor(StringRef input,
                                   const std::map<std::string, ConfigInt> &vocabs) {
    auto find = [&](const char *key) -> const ConfigInt * {
      auto it = vocabs.find(key);
      return it == vocabs.end() ? nullptr : &it->second;
    };
    if (input.starts_with("src") && find("src_vocab"))
      return find("src_vocab");
    if (input.starts_with("tgt") && find("tgt_vocab"))
      return find("tgt_vocab");
    return find("vocab");
  }

  /// The names of entry `name`'s inputs, or nullopt when there is none.
  std::optional<std::vector<std::string>> inputsOf(StringRef name) {
    auto func = module.lookupSymbol<func::FuncOp>(name);
    if (!func || !func->hasAttr("tx.entry"))
      return std::nullopt;
    std::vector<std::string> names;
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (auto attr = func.getArgAttrOfType<StringAttr>(i, "tx.name"))
        names.push_back(attr.str());
    return names;
  }

  /// Why the driver's text commands treat the spec as seq2seq, or "".
  std::string seq2seqReason() {
    auto has = [](const std::optional<std::vector<std::string>> &inputs,
                  std::initializer_list<const char *> names) {
      return inputs && llvm::any_of(names, [&](const char *name) {
               return llvm::is_contained(*inputs, name);
             });
    };
    std::optional<std::vector<std::string>> train = inputsOf("train"),
                                            encode = inputsOf("encode"),
                                            decode = inputsOf("decode");
    if (has(train, {"src"}) && has(train, {"tgt_in", "tgt"}))
      return "entry 'train' takes 'src' and a target";
    if (has(encode, {"src"}) && has(decode, {"tgt_in", "tgt"}))
      return "entries 'encode' and 'decode' take 'src' and 'tgt'";
    return "";
  }

  /// A seq2seq model's text commands put 4 special tokens in each
  /// vocabulary: its src and tgt vocabularies need room for them.
  void checkSeq2Seq(const std::map<std::string, ConfigInt> &vocabs,
                    const std::string &why) {
    std::set<std::string> reported;
    for (const char *input : {"src", "tgt"}) {
      const ConfigInt *vocab = vocabFor(input, vocabs);
      if (!vocab || vocab->value >= kNumSpecialTokens ||
          !reported.insert(vocab->name).second)
        continue;
      diags.error(vocab->loc,
                  "config '" + vocab->name + "' = " +
                      std::to_string(vocab->value) +
                      " leaves no room for the 4 special tokens ([PAD] [UNK] "
                      "[SOS] [EOS]) the executable's tokenizer puts in every "
                      "vocabulary of a seq2seq model",
                  "the spec is seq2seq (" + why +
                      "); give it a vocabulary of at least 4 ids");
    }
  }

  static SourceLoc specLocOf(Location loc) {
    if (auto fileLoc = loc->findInstanceOf<FileLineColLoc>())
      return {fileLoc.getLine(), fileLoc.getColumn()};
    return {};
  }

  ModuleOp module;
  const ConfigEnv &env;
  txc::DiagnosticEngine &diags;
  std::map<std::string, SourceLoc> configLocs;
  std::vector<InputEmbedding> embeddings;
};

} // namespace

void txc::detail::checkModelContract(ModuleOp module, const ast::Module &ast,
                                     const ConfigEnv &env,
                                     txc::DiagnosticEngine &diags) {
  ContractChecker(module, ast, env, diags).run();
}
