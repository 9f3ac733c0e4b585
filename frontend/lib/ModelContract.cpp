//===- ModelContract.cpp - what the executable's driver needs of a spec ---===//
//
// The compiled program's driver (runtime/driver, docs/driver.md) reads some
// config values by name and finds entry inputs by role (ModelRoles.cpp):
//  - `pad` is the id it pads token (i32) inputs with and where its tokenizer
//    puts [PAD];
//  - a model of a kind (seq2seq, language_model, classifier) has text
//    commands that fill the token inputs (@source, @target_in, @target_out,
//    @tokens, @targets) with ids of word vocabularies sized by `src_vocab`
//    (@source) and `tgt_vocab` (@target_*), or `vocab`, that start with the
//    4 special tokens [PAD] [UNK] [SOS] [EOS], padded with `pad` (vocabKeyFor
//    in InputValidation.cpp). So the embeddings of those inputs
//    (`embedding(ids, ...)` or a lookup `table[ids]`) need at least that
//    many rows, and `pad` must be one of them. (`run` checks any input's
//    ids against the table it indexes: other inputs, such as position or
//    segment ids, need nothing here.)
// A spec the driver cannot run that way is an error here, at the config item
// or the embedding concerned, instead of a failure at run time. Sizes that
// are fine for `run` alone (an embedding of one row) are errors only where a
// kind's commands need more.
//
//===----------------------------------------------------------------------===//
#include "MLIRGenImpl.h"

#include "tx/Dialect/TxRoles.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallSet.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <set>

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
  std::string role;  // its role (@source, @tokens, ...)
  int64_t rows = 0;  // the table's vocabulary
  SourceLoc loc;
};

/// A comparison of a token input that may be a padding mask, as
/// forEachMaskId finds it.
struct MaskUse {
  int64_t id = 0;        ///< the id it compares with
  std::string relation;  ///< an order comparison's ("ids > 0"), "" else
  bool onPad = false;    ///< it tells the pad from (most) other ids
  bool constant = false; ///< one value for every id of the vocabulary
  bool atPad = false;    ///< its value at the pad
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
    std::string kind = kindReason();
    if (kind.empty())
      return;
    collectEmbeddings();
    const InputEmbedding *smallest = nullptr;
    for (const InputEmbedding &embedding : embeddings) {
      if (const ConfigInt *vocab = vocabFor(embedding.role, vocabs);
          vocab && vocab->value > embedding.rows) {
        diags.error(embedding.loc,
                    "the executable accepts ids of '" + embedding.input +
                        "' below config '" + vocab->name + "' = " +
                        std::to_string(vocab->value) +
                        ", but this embedding has " +
                        std::to_string(embedding.rows) + " rows",
                    "give the embedding the vocabulary '" + vocab->name + "'");
        noteFlag(vocab->name);
      }
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
      noteFlag("pad");
    }
    checkSpecialTokens(vocabs, kind);
    // A `pad` the error above refused: the warnings would say there is none
    // and advise adding the very line that is there.
    if (!pad && env.lookup("pad"))
      return;
    checkPaddingMasks(pad);
    checkUnmaskedInputs(pad);
    checkUnmaskedAttentions(pad);
    checkPaddedWeights(pad);
    checkFixedPositionPooling(pad);
  }

private:
  /// After an error about config `name` at the spec's line: the value came
  /// from a -D flag (the line shows the spec's own value).
  void noteFlag(const std::string &name) {
    auto flag = env.flags.find(name);
    if (flag != env.flags.end())
      diags.note({0, 0},
                 "'" + name + "' is set on the command line: " + flag->second);
  }

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
      noteFlag(name);
      return std::nullopt;
    }
    return ConfigInt{name, static_cast<int64_t>(number), loc};
  }

  /// The input roles the text commands fill with token ids.
  static bool isTokenRole(StringRef role) {
    return llvm::is_contained(
        {"source", "target_in", "target_out", "tokens", "targets"}, role);
  }

  /// Embeddings of token inputs: `embedding(ids, ...)` and the lookup
  /// `table[ids]` (a gather along the rows of a rank-2 table, as gpt's
  /// `wte[ids]`).
  void collectEmbeddings() {
    for (auto func : module.getOps<func::FuncOp>()) {
      if (!func->hasAttr("tx.entry") || func.isExternal())
        continue;
      auto add = [&](Value ids, Value table, Location loc) {
        auto arg = dyn_cast<BlockArgument>(ids);
        if (!arg || arg.getOwner() != &func.front())
          return;
        auto role =
            func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kRoleAttr);
        if (!role || !isTokenRole(role.getValue()))
          return;
        auto name =
            func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "tx.name");
        auto type = cast<RankedTensorType>(table.getType());
        embeddings.push_back({name ? name.str() : "?", role.str(),
                              type.getDimSize(0), specLocOf(loc)});
      };
      func.walk([&](Operation *op) {
        if (auto embedding = dyn_cast<EmbeddingOp>(op))
          add(embedding.getIds(), embedding.getTable(), op->getLoc());
        if (auto gather = dyn_cast<GatherOp>(op))
          if (int64_t(gather.getAxis()) == 0 &&
              cast<RankedTensorType>(gather.getInput().getType()).getRank() ==
                  2 &&
              !cast<RankedTensorType>(gather.getInput().getType())
                   .isDynamicDim(0))
            add(gather.getIndices(), gather.getInput(), op->getLoc());
      });
    }
  }

  /// The vocabulary of token input `input` (its table's rows), for order
  /// comparisons; a large one when no table of it is known.
  int64_t vocabularyOf(const std::string &input) const {
    int64_t vocab = int64_t(1) << 30;
    for (const InputEmbedding &embedding : embeddings)
      if (embedding.input == input && embedding.rows > 0)
        vocab = embedding.rows;
    return vocab;
  }

  /// The config value the driver checks ids of an input with `role`
  /// against (runtime/driver/data/InputValidation.cpp, vocabKeyFor).
  static const ConfigInt *
  vocabFor(StringRef role, const std::map<std::string, ConfigInt> &vocabs) {
    auto find = [&](const char *key) -> const ConfigInt * {
      auto it = vocabs.find(key);
      return it == vocabs.end() ? nullptr : &it->second;
    };
    if (role == "source" && find("src_vocab"))
      return find("src_vocab");
    if (role.starts_with("target_") && find("tgt_vocab"))
      return find("tgt_vocab");
    return find("vocab");
  }

  /// Why the driver's text commands fill token inputs, or "" (kind none).
  std::string kindReason() {
    auto kind = module->getAttrOfType<StringAttr>(kKindAttr);
    if (!kind || kind.getValue() == "none")
      return "";
    if (module->hasAttr(kKindInferredAttr))
      return "the spec is " + kind.str() +
             " (inferred from the seq2seq entries txc knows by name: "
             "train(src, tgt_in, tgt_out), encode(src), "
             "decode(tgt, memory, src))";
    return "the spec is " + kind.str() + " (`kind " + kind.str() + "`)";
  }

  /// A model of a kind has text commands that put 4 special tokens in each
  /// vocabulary: its vocabularies need room for them.
  void checkSpecialTokens(const std::map<std::string, ConfigInt> &vocabs,
                          const std::string &why) {
    std::set<std::string> reported;
    std::set<std::string> roles;
    for (const InputEmbedding &embedding : embeddings)
      roles.insert(embedding.role);
    if (module->getAttrOfType<StringAttr>(kKindAttr).getValue() == "seq2seq")
      roles.insert({"source", "target_in"});
    for (const std::string &role : roles) {
      const ConfigInt *vocab = vocabFor(role, vocabs);
      if (!vocab || vocab->value >= kNumSpecialTokens ||
          !reported.insert(vocab->name).second)
        continue;
      diags.error(
          vocab->loc,
          "config '" + vocab->name + "' = " + std::to_string(vocab->value) +
              " leaves no room for the 4 special tokens ([PAD] [UNK] "
              "[SOS] [EOS]) the executable's tokenizer puts in every "
              "vocabulary of a " +
              module->getAttrOfType<StringAttr>(kKindAttr).str() + " model",
          why + "; give it a vocabulary of at least 4 ids");
      noteFlag(vocab->name);
    }
  }

  /// The id the executable pads token inputs with, as the warnings name it.
  static std::string padPhrase(const std::optional<ConfigInt> &pad) {
    return pad ? "config 'pad' = " + std::to_string(pad->value)
               : std::string("id 0 (no config 'pad')");
  }

  /// A mask that compares a token input with another id than the one the
  /// executable pads it with (`padding_mask(src, 0)`, `src != 0` with
  /// `pad = 3`): padded positions are attended to as tokens, so a
  /// sentence's result depends on what it is batched with (the loss's
  /// ignore_index gets the same check in the driver, train).
  void checkPaddingMasks(const std::optional<ConfigInt> &pad) {
    const int64_t padId = pad ? pad->value : 0;
    struct Mask {
      std::string input, role;
      int64_t compared;
      std::string relation; // an order comparison's, "" for == and !=
    };
    // In source order, each once per role and id (a def's mask is in
    // every entry, under each entry's name of the input; a def called on
    // two inputs has a mask of each, and the second was not reported).
    std::map<std::tuple<uint32_t, uint32_t, std::string, int64_t>, Mask> masks;
    forEachEntryInput([&](func::FuncOp, BlockArgument arg, StringAttr role,
                          StringAttr name) {
      if (!role || !isTokenRole(role.getValue()))
        return;
      const std::string input = name ? name.str() : "?";
      const int64_t vocab = vocabularyOf(input);
      // The pad comparisons of this input: another id's comparison joined
      // to one of them ((ids != pad) & (ids != sos): [SOS] left out of a
      // masked mean) is no padding mask gone wrong.
      llvm::SmallPtrSet<Operation *, 4> padComparisons;
      forEachMaskId(arg, padId, vocab, [&](Operation *op, const MaskUse &use) {
        if (use.onPad)
          padComparisons.insert(op);
      });
      forEachMaskId(arg, padId, vocab, [&](Operation *op, const MaskUse &use) {
        // One value for every id is no feature (`float(ids >= 0)` as a
        // masked mean's weights).
        if (use.onPad || (!use.constant && isSelector(op)) ||
            joinedWithAny(op, padComparisons))
          return;
        SourceLoc loc = specLocOf(op->getLoc());
        masks.try_emplace({loc.line, loc.col, role.str(), use.id},
                          Mask{input, role.str(), use.id, use.relation});
      });
    });
    for (const auto &[at, mask] : masks)
      diags.warning(
          SourceLoc{std::get<0>(at), std::get<1>(at)},
          mask.relation.empty()
              ? "this mask compares '" + mask.input + "' (@" + mask.role +
                    ") with id " + std::to_string(mask.compared) +
                    ", but the executable pads '" + mask.input + "' with " +
                    padPhrase(pad) +
                    ": padded positions count as tokens, and a result "
                    "depends on what its sentence is batched with"
              : "this mask ('" + mask.input + "' (@" + mask.role +
                    "): " + mask.relation +
                    ") gives the pad the value it gives most other ids, and "
                    "the executable pads '" +
                    mask.input + "' with " + padPhrase(pad) +
                    ": it does not tell padding from tokens (padded "
                    "positions counted as tokens make a result depend on "
                    "what its sentence is batched with)",
          pad ? "compare with pad, e.g. 'padding_mask(" + mask.input + ", pad)'"
          : mask.relation.empty()
              ? "add 'config pad = " + std::to_string(mask.compared) +
                    "' (the id the executable pads with and its "
                    "tokenizer's [PAD])"
              : "compare with the id the executable pads with, e.g. "
                "'padding_mask(" +
                    mask.input +
                    ", 0)', or add 'config pad = N' (its tokenizer's "
                    "[PAD])");
  }

  /// A source or tokens input of a seq2seq model or classifier that no
  /// mask reads: the executable pads the shorter texts of a batch (train,
  /// eval, translate), and without a mask the padded positions are attended
  /// to, so a text's result depends on what it is batched with (a PyTorch
  /// model without a key padding mask alike). One warning an input, naming
  /// its entries; an input of a constant length is padded alone too.
  void checkUnmaskedInputs(const std::optional<ConfigInt> &pad) {
    StringRef kind = module->getAttrOfType<StringAttr>(kKindAttr).getValue();
    if (kind != "seq2seq" && kind != "classifier")
      return;
    struct Unmasked {
      std::string role;
      std::vector<std::string> entries;
      SourceLoc loc;
    };
    std::map<std::string, Unmasked> unmasked; // by input name
    std::vector<std::string> order;
    forEachEntryInput([&](func::FuncOp func, BlockArgument arg, StringAttr role,
                          StringAttr name) {
      if (!isPaddedText(arg, role, name) || arg.use_empty() || readByMask(arg))
        return;
      auto [it, added] = unmasked.try_emplace(
          name.str(), Unmasked{role.str(), {}, specLocOf(func.getLoc())});
      if (added)
        order.push_back(name.str());
      it->second.entries.push_back(func.getSymName().str());
    });
    for (const std::string &input : order) {
      const Unmasked &found = unmasked[input];
      std::string entries;
      for (size_t i = 0; i < found.entries.size(); ++i)
        entries += (i ? ", '" : "'") + found.entries[i] + "'";
      diags.warning(
          found.loc,
          "no mask reads '" + input + "' (@" + found.role + ") in " +
              (found.entries.size() == 1 ? "entry " : "entries ") + entries +
              ": the executable pads the shorter texts of a batch with " +
              padPhrase(pad) +
              ", and attention over the padded positions makes a text's "
              "result depend on what it is batched with",
          "mask them in every attention that reads '" + input +
              "', e.g. 'masked_fill(scores, !padding_mask(" + input +
              ", pad), -1e9)'");
    }
  }

  /// An attention (or a softmax) over the positions of a padded @source or
  /// @tokens input that no mask of that input reaches, where another one
  /// does (with none at all, checkUnmaskedInputs says so once): a
  /// cross-attention written without the source's mask attends to the
  /// padded memory, and a text's result depends on its batch (a tester's
  /// eval loss changed with --batch, without a word).
  void checkUnmaskedAttentions(const std::optional<ConfigInt> &pad) {
    StringRef kind = module->getAttrOfType<StringAttr>(kKindAttr).getValue();
    if (kind != "seq2seq" && kind != "classifier")
      return;
    const int64_t padId = pad ? pad->value : 0;
    std::set<std::tuple<uint32_t, uint32_t, std::string>> reported;
    forEachEntryInput([&](func::FuncOp func, BlockArgument arg, StringAttr role,
                          StringAttr name) {
      if (!isPaddedText(arg, role, name) || !readByMask(arg))
        return;
      const Dim length = getShape(cast<RankedTensorType>(arg.getType()))[1];
      // Another input of the entry with that length (one dim for source
      // and target) says not whose positions the keys are.
      for (BlockArgument other : func.getArguments()) {
        auto otherType = dyn_cast<RankedTensorType>(other.getType());
        if (other != arg && otherType && otherType.getRank() >= 2 &&
            getShape(otherType)[1] == length)
          return;
      }
      llvm::SmallPtrSet<Operation *, 8> masks;
      // Each mask's sense: +1 true at the tokens (padding_mask, ids !=
      // pad), -1 true at the pad (ids == pad), 0 another id's.
      llvm::DenseMap<Operation *, int> sense;
      forEachMaskId(arg, padId, vocabularyOf(name.str()),
                    [&](Operation *op, const MaskUse &use) {
                      masks.insert(op);
                      sense[op] = !use.onPad ? 0 : use.atPad ? -1 : +1;
                    });
      auto senseOf = [&](Value value, int depth) {
        return maskSense(value, sense, depth);
      };
      // How a mask reached the scores wrongly, the first such use (the
      // warning's reason); "" when none did.
      std::string misuse;
      // Whether `value` is computed from one of those masks here: through
      // element-wise ops (masked_fill, where, an additive mask), not into
      // the products that made the scores (the keys come from an encoder
      // whose own attention is masked).
      // A mask that fills the tokens (masked_fill with a mask true at
      // them: the `!` forgotten), a fill that is no large negative number
      // (0.0 is a score), or scores multiplied by a mask (a score of 0 is
      // attended to) reaches them without removing the padding: not
      // counted, and said.
      // The splat value of a constant operand, if it is one.
      auto constantValue = [](Value value) { return splatFloat(value); };
      auto text = [](double value) {
        char buffer[32];
        std::snprintf(buffer, sizeof(buffer), "%g", value);
        return std::string(buffer);
      };
      auto note = [&](const std::string &why) {
        if (misuse.empty())
          misuse = why;
      };
      // What an additive mask adds to the padding's scores less what it
      // adds to the tokens' (`sign` -1 on the subtracted side): removing
      // the padding takes -1e4 or less.
      auto checkAdded = [&](double padMinusTokens) {
        if (padMinusTokens <= -1e4)
          return true;
        note(padMinusTokens >= 1e4
                 ? "its additive mask lowers the tokens' scores, not the "
                   "padding's (the mask or the sign the wrong way round)"
                 : "its additive mask puts " + text(padMinusTokens) +
                       " between the padding's scores and the tokens', which "
                       "softmax still weighs (-1e9 removes them)");
        return false;
      };
      auto masked = [&](Value value) {
        llvm::SmallPtrSet<Operation *, 32> seen;
        // A value on the scores' path, and the sign it adds them with.
        llvm::SmallVector<std::pair<Value, double>> work{{value, 1.0}};
        while (!work.empty()) {
          auto [current, sign] = work.pop_back_val();
          Operation *def = current.getDefiningOp();
          if (!def || !seen.insert(def).second)
            continue;
          if (masks.contains(def))
            return true;
          if (isa<MatmulOp, LinearOp, AttentionOp, SoftmaxOp, EmbeddingOp,
                  GatherOp, LayerNormOp, RmsNormOp, MergeHeadsOp, SplitHeadsOp>(
                  def))
            continue;
          if (auto fill = dyn_cast<MaskedFillOp>(def)) {
            const int maskSense = senseOf(fill.getMask(), 0);
            const double fillValue = fill.getValue().convertToDouble();
            if (maskSense > 0 || fillValue > -1e4) {
              note(maskSense > 0
                       ? "its masked_fill's mask is true at the tokens, so it "
                         "fills them and keeps the padding (write "
                         "masked_fill(s, !mask, ...))"
                       : "its masked_fill gives the masked scores " +
                             text(fillValue) +
                             ", which softmax still weighs (-1e9 or -inf "
                             "removes them)");
              work.push_back({fill.getInput(), sign});
              continue;
            }
          }
          if (auto where = dyn_cast<WhereOp>(def)) {
            const int condSense = senseOf(where->getOperand(0), 0);
            const std::optional<double> a = constantValue(where->getOperand(1)),
                                        b = constantValue(where->getOperand(2));
            if (condSense != 0 && (a || b)) {
              // What the padding and the tokens get: a where the
              // condition holds.
              const bool atPad = condSense < 0;
              std::optional<double> pad = atPad ? a : b, token = atPad ? b : a;
              if (pad && token) {
                if (checkAdded(sign * (*pad - *token)))
                  return true;
                continue;
              }
              if (pad && !token) { // the tokens keep their scores
                if (sign * *pad <= -1e4)
                  return true;
                note("its where gives the padding's scores " + text(*pad) +
                     ", which softmax still weighs (-1e9 removes them)");
                work.push_back({where->getOperand(atPad ? 2 : 1), sign});
                continue;
              }
              note("its where's condition is true at the " +
                   std::string(atPad ? "pad" : "tokens") +
                   ", so it replaces the tokens' scores and keeps the "
                   "padding's");
              work.push_back({where->getOperand(atPad ? 2 : 1), sign});
              continue;
            }
          }
          if (isa<MulOp>(def)) {
            Value x = def->getOperand(0), y = def->getOperand(1);
            const int xs = senseOf(x, 0), ys = senseOf(y, 0);
            const std::optional<double> xc = constantValue(x),
                                        yc = constantValue(y);
            // A mask times a constant: an additive mask's term.
            if ((xs != 0 && yc) || (ys != 0 && xc)) {
              const int maskSense = xs != 0 ? xs : ys;
              const double scale = xs != 0 ? *yc : *xc;
              if (checkAdded(sign * (maskSense < 0 ? scale : -scale)))
                return true;
              continue;
            }
            if (xs != 0 || ys != 0) {
              note("its scores are multiplied by the mask, and a score of 0 "
                   "is weighed like any other (masked_fill(s, !mask, -1e9) "
                   "removes them)");
              work.push_back({xs != 0 ? y : x, sign});
              continue;
            }
          }
          if (isa<SubOp>(def)) {
            work.push_back({def->getOperand(0), sign});
            work.push_back({def->getOperand(1), -sign});
            continue;
          }
          if (isa<NegOp>(def)) {
            work.push_back({def->getOperand(0), -sign});
            continue;
          }
          for (Value operand : def->getOperands())
            work.push_back({operand, sign});
        }
        return false;
      };
      // Whether the probabilities are masked after the softmax, then
      // renormalized (AllenNLP's masked_softmax: `p * float(m)` over its
      // sum): an element-wise user within a few steps whose other operand
      // a mask of the input reaches.
      auto maskedAfter = [&](Value probabilities) {
        SmallVector<std::pair<Value, int>> work{{probabilities, 0}};
        while (!work.empty()) {
          auto [value, depth] = work.pop_back_val();
          if (depth > 3)
            continue;
          for (Operation *user : value.getUsers()) {
            if (!isa<MulOp, DivOp, MaskedFillOp, WhereOp, AddOp>(user))
              continue;
            for (Value operand : user->getOperands())
              if (operand != value && masked(operand))
                return true;
            work.push_back({user->getResult(0), depth + 1});
          }
        }
        return false;
      };
      auto keyedBy = [&](Type keys, int64_t axis) {
        auto tensor = dyn_cast<RankedTensorType>(keys);
        if (!tensor || tensor.getRank() < 2)
          return false;
        if (axis < 0)
          axis += tensor.getRank();
        return axis >= 0 && axis < tensor.getRank() &&
               getShape(tensor)[size_t(axis)] == length;
      };
      const std::string input = name.str();
      func.walk([&](Operation *op) {
        bool unmasked = false;
        misuse.clear();
        if (auto attention = dyn_cast<AttentionOp>(op)) {
          unmasked = keyedBy(attention.getKey().getType(), -2) &&
                     (!attention.getMask() || !masked(attention.getMask()));
          // attention keeps the keys its mask is true at.
          if (!unmasked && keyedBy(attention.getKey().getType(), -2) &&
              attention.getMask() && senseOf(attention.getMask(), 0) < 0) {
            unmasked = true;
            misuse = "its mask is true at the pad, and attention keeps the "
                     "keys its mask is true at (padding_mask(ids, pad) is "
                     "true at the tokens)";
          }
        } else if (auto softmax = dyn_cast<SoftmaxOp>(op))
          unmasked = keyedBy(softmax.getType(), softmax.getAxis()) &&
                     !masked(softmax.getInput()) &&
                     !maskedAfter(softmax.getResult());
        if (!unmasked || !reachesResults(op))
          return;
        SourceLoc loc = specLocOf(op->getLoc());
        if (!reported.insert({loc.line, loc.col, input}).second)
          return;
        diags.warning(
            loc,
            std::string(isa<AttentionOp>(op) ? "this attention"
                                             : "this softmax") +
                " is over the " + formatDim(length) + " positions of '" +
                input + "' (@" + role.str() + "), and " +
                (misuse.empty()
                     ? "no mask of '" + input + "' reaches it (another does)"
                     : "its mask of '" + input +
                           "' does not remove the padding: " + misuse) +
                ": the executable pads the shorter texts of a batch with " +
                padPhrase(pad) +
                ", so their padded positions are attended to here, and a "
                "text's result depends on what it is batched with",
            "give it a mask of '" + input +
                "', e.g. 'attention(q, k, v, "
                "padding_mask(" +
                input + ", pad))'; an entry that reads '" + input +
                "' only through another input takes it as an input too");
      });
    });
  }

  /// A sum or mean over the positions of a padded @source or @tokens input
  /// weighed by a mask of it that is true at the pad (a masked mean's
  /// weights `float(ids == pad)`, the `!` forgotten, or `float(ids < 5)`
  /// with pad 0): the padded positions are counted, and a text's result
  /// depends on what it is batched with, without a word (masks that reach
  /// attention scores are checkUnmaskedAttentions').
  void checkPaddedWeights(const std::optional<ConfigInt> &pad) {
    const int64_t padId = pad ? pad->value : 0;
    // One warning a line and input (a masked mean's sum and its count).
    std::set<std::pair<uint32_t, std::string>> reported;
    forEachEntryInput([&](func::FuncOp func, BlockArgument arg, StringAttr role,
                          StringAttr name) {
      if (!isPaddedText(arg, role, name))
        return;
      const Dim length = getShape(cast<RankedTensorType>(arg.getType()))[1];
      llvm::DenseMap<Operation *, int> sense;
      forEachMaskId(arg, padId, vocabularyOf(name.str()),
                    [&](Operation *op, const MaskUse &use) {
                      if (use.onPad)
                        sense[op] = use.atPad ? -1 : +1;
                    });
      if (sense.empty())
        return;
      // The sense of the mask that weighs `value` (a factor of its
      // product, through reshapes and broadcasts), 0 when none does.
      // A value kept where a mask holds and zeroed elsewhere
      // (masked_fill(x, m, 0.0) keeps where m is false; where(m, x, 0.0)
      // where it is true) is weighed by that mask too.
      auto isZero = [](Value value) { return splatFloat(value) == 0.0; };
      // -1 for a negative splat constant, +1 for another one, 0 else.
      auto constantSign = [](Value value) {
        const std::optional<double> c = splatFloat(value);
        return !c ? 0 : *c < 0 ? -1 : 1;
      };
      // The sense of the mask that weighs `value` (a factor of its
      // product, through reshapes and broadcasts), times the sign it is
      // weighed with (x * -float(ids == pad) takes the padding away);
      // 0 when no mask does.
      auto weighedBy = [&](Value value) {
        SmallVector<std::pair<Value, int>> work{{value, 1}};
        for (size_t i = 0; i < work.size() && i < 64; ++i) {
          const auto [current, sign] = work[i];
          if (int found = maskSense(current, sense))
            return found * sign;
          Operation *def = current.getDefiningOp();
          if (auto fill = dyn_cast_or_null<MaskedFillOp>(def);
              fill && fill.getValue().isZero())
            if (int found = -maskSense(fill.getMask(), sense))
              return found * sign;
          if (auto where = dyn_cast_or_null<WhereOp>(def)) {
            const int condition = maskSense(where->getOperand(0), sense);
            if (condition && isZero(where->getOperand(2)))
              return condition * sign;
            if (condition && isZero(where->getOperand(1)))
              return -condition * sign;
          }
          if (isa_and_nonnull<MulOp>(def)) {
            for (int k = 0; k < 2; ++k)
              if (int c = constantSign(def->getOperand(1 - k)))
                work.push_back({def->getOperand(k), sign * c});
            if (!constantSign(def->getOperand(0)) &&
                !constantSign(def->getOperand(1)))
              work.append(
                  {{def->getOperand(0), sign}, {def->getOperand(1), sign}});
          } else if (isa_and_nonnull<NegOp>(def)) {
            work.push_back({def->getOperand(0), -sign});
          } else if (isa_and_nonnull<ReshapeOp, BroadcastToOp, DivOp>(def)) {
            work.push_back({def->getOperand(0), sign});
          }
        }
        return 0;
      };
      // Whether `op`'s result is taken away: it reaches a sum with a
      // negative sign (subtracted, negated, times a negative constant;
      // through reshapes): sum(x) - sum(x * float(ids == pad)), a length
      // T - sum(float(ids == pad)) written with [:, None] on each, or
      // sum(x) + sum(x * pm) * -1.0.
      auto takenAway = [&](Operation *op) {
        SmallVector<std::pair<Value, int>> work{{op->getResult(0), 1}};
        for (size_t i = 0; i < work.size() && i < 32; ++i) {
          const auto [current, sign] = work[i];
          if (sign < 0)
            return true;
          for (Operation *user : current.getUsers()) {
            if (isa<NegOp>(user))
              work.push_back({user->getResult(0), -sign});
            else if (isa<SubOp>(user))
              work.push_back({user->getResult(0),
                              user->getOperand(1) == current ? -sign : sign});
            else if (isa<ReshapeOp, BroadcastToOp, AddOp>(user))
              work.push_back({user->getResult(0), sign});
            else if (isa<MulOp>(user))
              for (Value operand : user->getOperands())
                if (operand != current)
                  if (int c = constantSign(operand))
                    work.push_back({user->getResult(0), sign * c});
          }
        }
        return false;
      };
      const std::string input = name.str();
      func.walk([&](Operation *op) {
        if (!isa<ReduceSumOp, ReduceMeanOp>(op))
          return;
        auto type = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
        auto axes = op->getAttrOfType<DenseI64ArrayAttr>("axes");
        if (!type || !axes)
          return;
        const Shape shape = getShape(type);
        const int64_t rank = type.getRank();
        if (llvm::none_of(axes.asArrayRef(), [&](int64_t axis) {
              axis = axis < 0 ? axis + rank : axis;
              return axis >= 0 && axis < rank && shape[size_t(axis)] == length;
            }))
          return;
        if (takenAway(op))
          return;
        if (weighedBy(op->getOperand(0)) >= 0 || !reachesResults(op))
          return;
        SourceLoc loc = specLocOf(op->getLoc());
        if (!reported.insert({loc.line, input}).second)
          return;
        diags.warning(
            loc,
            std::string("this ") + (isa<ReduceSumOp>(op) ? "sum" : "mean") +
                " over the " + formatDim(length) + " positions of '" + input +
                "' (@" + role.str() +
                ") weighs them by a mask that is true at the pad: the "
                "executable pads the shorter texts of a batch with " +
                padPhrase(pad) +
                ", so their padded positions are counted here, and a text's "
                "result depends on what it is batched with",
            "weigh by a mask true at the tokens, e.g. "
            "'float(padding_mask(" +
                input + ", pad))'");
      });
    });
  }

  /// A classifier that pools a fixed position past the first of its texts
  /// (`x[:, -1, :]`, or `x[:, 63, :]` with T = 64): the executable pads
  /// texts at the end, so for every text shorter than its batch's longest
  /// (or than a constant length) that position is [PAD], and the class
  /// depends on the padding. A tester's constant-length classifier read
  /// [PAD] for short texts and gave 22 of 60 other labels than the same
  /// spec with a dim, without a word.
  void checkFixedPositionPooling(const std::optional<ConfigInt> &pad) {
    StringRef kind = module->getAttrOfType<StringAttr>(kKindAttr).getValue();
    if (kind != "classifier")
      return;
    // The length axis of each @tokens input.
    std::vector<std::pair<std::string, Dim>> lengths;
    forEachEntryInput([&](func::FuncOp, BlockArgument arg, StringAttr role,
                          StringAttr name) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!role || role.getValue() != "tokens" || !type || type.getRank() < 2)
        return;
      Dim length = getShape(type)[1];
      for (const auto &[known, dim] : lengths)
        if (dim == length)
          return;
      lengths.emplace_back(name ? name.str() : "?", length);
    });
    std::set<std::pair<uint32_t, uint32_t>> reported;
    // The warning at `op`, which reads fixed positions `first` to `position`
    // (the last it reads) of the `length` positions of @tokens `input`.
    auto warn = [&](Operation *op, const std::string &input, const Dim &length,
                    int64_t first, int64_t position) {
      SourceLoc loc = specLocOf(op->getLoc());
      if (!reported.insert({loc.line, loc.col}).second)
        return;
      std::string shorter =
          position < 0 || length.isSymbolic()
              ? std::string("shorter than the longest of its batch")
              : "of fewer than " + std::to_string(position + 1) + " tokens" +
                    (position + 1 == length.size
                         ? std::string(" (the constant length)")
                         : std::string());
      std::string positions =
          first == position
              ? "position " + std::to_string(position)
              : "positions " + std::to_string(first) + " to " +
                    std::to_string(position);
      diags.warning(
          loc,
          std::string(isa<SliceOp>(op)   ? "this slice"
                      : isa<SplitOp>(op) ? "this split's piece"
                                         : "this index") +
              " reads " + positions + " of the " +
              formatDim(length) + " positions of '" + input +
              "' (@tokens): the executable pads texts at the end with " +
              padPhrase(pad) + ", so for every text " + shorter +
              " it reads a padded position, and the class depends on the "
              "padding",
          "pool the first position ('x[:, 0, :]', BERT's [CLS]) or a "
          "mean over the positions padding_mask keeps");
    };
    // The axis of `shape` past the batch that is the texts' `length`: a
    // dim's symbol, or a constant length no other such axis has (a
    // [B, 8 features, T = 8] tensor says not which is which); -1 if none.
    // Whether axis `a` of `value` (past the batch) holds the texts'
    // `length` positions: of that size, and may hold positions
    // (mayBePositions: a linear's or a table's features, the heads, a
    // parameter do not). A [B, T, T] attention map holds them on both;
    // [B, 16, 16] from linear(x, 16) over 16 positions on the first.
    auto isLengthAxis = [](Value value, int64_t a, const Dim &length) {
      const Shape shape = getShape(cast<RankedTensorType>(value.getType()));
      return a >= 1 && a < int64_t(shape.size()) &&
             shape[size_t(a)] == length && mayBePositions(value, a);
    };
    for (auto func : module.getOps<func::FuncOp>()) {
      if (!func->hasAttr("tx.entry") || func.isExternal())
        continue;
      func.walk([&](Operation *op) {
        auto source =
            op->getNumOperands()
                ? dyn_cast<RankedTensorType>(op->getOperand(0).getType())
                : nullptr;
        // `a, b = chunk(x, 2, axis = 1)` pooled: each piece but the last
        // is a fixed range that ends before the last position, as
        // `x[:, :4, :]` is (it was silent where the slice was warned).
        if (auto split = dyn_cast<SplitOp>(op); split && source &&
                                                 source.getRank() >= 2) {
          const Shape shape = getShape(source);
          int64_t axis = split.getAxis();
          if (axis < 0)
            axis += source.getRank();
          for (const auto &[input, length] : lengths) {
            if (!isLengthAxis(split->getOperand(0), axis, length) ||
                length.isSymbolic())
              continue;
            ArrayRef<int64_t> sizes = split.getSizes();
            int64_t first = 0;
            for (size_t j = 0; j + 1 < sizes.size(); first += sizes[j++]) {
              const int64_t last = first + sizes[j] - 1;
              if (last == 0 || !valueReachesResults(split->getResult(j)))
                continue;
              warn(op, input, length, first, last);
              return;
            }
          }
          return;
        }
        if (!source || source.getRank() < 2 || !(isa<SliceOp, GatherOp>(op)) ||
            !reachesResults(op))
          return;
        for (const auto &[input, length] : lengths)
          for (int64_t axis = 1; axis < source.getRank(); ++axis) {
            if (!isLengthAxis(op->getOperand(0), axis, length))
              continue;
            if (auto slice = dyn_cast<SliceOp>(op)) {
              // `x[:, p, :]` with p past the first, or a range of a constant
              // length that ends before its last position (`x[:, 1:3, :]`
              // summed): texts shorter than its end are read at [PAD]. A
              // range through the end (`x[:, 1:, :]`) is the positions a
              // masked mean reads, and is left alone.
              ArrayRef<int64_t> starts = slice.getStarts();
              auto result = dyn_cast<RankedTensorType>(slice.getType());
              if (int64_t(starts.size()) != source.getRank() || !result ||
                  result.isDynamicDim(axis))
                continue;
              int64_t first = starts[size_t(axis)];
              int64_t count = result.getDimSize(axis);
              int64_t last =
                  first + (count - 1) * slice.getStrideValues()[size_t(axis)];
              if (count == 1 ? first == 0
                             : first < 0 || last == 0 || length.isSymbolic() ||
                                   last + 1 >= length.size)
                continue;
              warn(op, input, length, first, last);
              return;
            }
            // `x[:, arange(p, q), :]` or a constant index: fixed positions
            // along the length axis, read as a slice's are.
            auto gather = cast<GatherOp>(op);
            int64_t gatherAxis = gather.getAxis();
            if (gatherAxis < 0)
              gatherAxis += source.getRank();
            std::optional<std::pair<int64_t, int64_t>> positions =
                fixedPositions(gather.getIndices());
            if (gatherAxis != axis || !positions)
              continue;
            auto [first, last] = *positions;
            if (last <= 0 || (first != last && !length.isSymbolic() &&
                              last + 1 >= length.size))
              continue;
            warn(op, input, length, first, last);
            return;
          }
      });
    }
  }

  /// Whether axis `axis` of `value` may hold the texts' positions: false
  /// where it is known to come from elsewhere (a linear's or matmul's
  /// output features, a table's columns, the heads, a parameter or a
  /// constant), true where it comes from an entry input's axis or cannot be
  /// followed (a reshape that does more than add or drop ones, a
  /// reduction). A GLU head that chunks pooled features ([B, 16] after
  /// `layer_norm(x[:, 0, :])`) of the constant length's size was warned
  /// about as reading positions.
  static bool mayBePositions(Value value, int64_t axis, int depth = 0) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type)
      return false;
    const int64_t rank = type.getRank();
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank)
      return false;
    Operation *def = value.getDefiningOp();
    if (!def || depth > 48)
      return true;
    auto operandAxis = [&](Value operand, int64_t a) {
      return mayBePositions(operand, a, depth + 1);
    };
    auto rankOf = [](Value v) {
      return cast<RankedTensorType>(v.getType()).getRank();
    };
    if (isa<ParamOp, ConstantOp, ArangeOp>(def))
      return false;
    if (auto linear = dyn_cast<LinearOp>(def))
      return axis != rank - 1 && operandAxis(def->getOperand(0), axis);
    if (isa<MatmulOp>(def)) {
      Value a = def->getOperand(0), b = def->getOperand(1);
      if (axis == rank - 1)
        return operandAxis(b, rankOf(b) - 1);
      if (axis == rank - 2)
        return operandAxis(a, rankOf(a) - 2);
      const int64_t fromEnd = rank - axis;
      return (rankOf(a) >= fromEnd && operandAxis(a, rankOf(a) - fromEnd)) ||
             (rankOf(b) >= fromEnd && operandAxis(b, rankOf(b) - fromEnd));
    }
    if (isa<EmbeddingOp>(def))
      return axis != rank - 1 &&
             operandAxis(cast<EmbeddingOp>(def).getIds(), axis);
    if (auto heads = dyn_cast<SplitHeadsOp>(def)) // [B, T, D] -> [B, h, T, d]
      return operandAxis(def->getOperand(0), axis == 0 ? 0 : axis == 2 ? 1 : 2);
    if (isa<MergeHeadsOp>(def)) // [B, h, T, d] -> [B, T, h * d]
      return axis == 0   ? operandAxis(def->getOperand(0), 0)
             : axis == 1 ? operandAxis(def->getOperand(0), 2)
                         : operandAxis(def->getOperand(0), 1) ||
                               operandAxis(def->getOperand(0), 3);
    if (auto transpose = dyn_cast<TransposeOp>(def)) {
      ArrayRef<int64_t> permutation = transpose.getPermutation();
      return axis < int64_t(permutation.size())
                 ? operandAxis(def->getOperand(0), permutation[size_t(axis)])
                 : true;
    }
    if (isa<ReshapeOp>(def)) {
      // Ones added or dropped: the axes of other sizes map in order.
      auto from = cast<RankedTensorType>(def->getOperand(0).getType());
      SmallVector<int64_t> fromAxes, toAxes;
      for (int64_t a = 0; a < from.getRank(); ++a)
        if (from.getDimSize(a) != 1)
          fromAxes.push_back(a);
      for (int64_t a = 0; a < rank; ++a)
        if (type.getDimSize(a) != 1)
          toAxes.push_back(a);
      if (fromAxes.size() != toAxes.size())
        return true;
      for (size_t k = 0; k < toAxes.size(); ++k)
        if (from.getDimSize(fromAxes[k]) != type.getDimSize(toAxes[k]))
          return true;
      for (size_t k = 0; k < toAxes.size(); ++k)
        if (toAxes[k] == axis)
          return operandAxis(def->getOperand(0), fromAxes[k]);
      return false; // an added one
    }
    if (auto attention = dyn_cast<AttentionOp>(def))
      return axis == rank - 1 ? operandAxis(attention.getValue(), axis)
                              : operandAxis(attention.getQuery(), axis);
    // A reduction's axes are its input's but the reduced ones (a masked
    // mean's [B, d] holds the features, not positions).
    if (isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>(def)) {
      Value input = def->getOperand(0);
      const int64_t inputRank = rankOf(input);
      auto axesAttr = def->getAttrOfType<DenseI64ArrayAttr>("axes");
      auto keepdim = def->getAttrOfType<BoolAttr>("keepdim");
      if (!axesAttr)
        return true;
      llvm::SmallSet<int64_t, 4> reduced;
      for (int64_t a : axesAttr.asArrayRef())
        reduced.insert(a < 0 ? a + inputRank : a);
      if (keepdim && keepdim.getValue())
        return !reduced.contains(axis) && operandAxis(input, axis);
      for (int64_t a = 0, kept = 0; a < inputRank; ++a) {
        if (reduced.contains(a))
          continue;
        if (kept++ == axis)
          return operandAxis(input, a);
      }
      return true;
    }
    // Slices and element-wise ops (norms, activations, softmax, where,
    // masked_fill, add): the operands' axis, aligned from the end, where
    // it has this size.
    if (isa<SliceOp>(def) ||
        (def->getNumResults() == 1 && def->getNumOperands() >= 1 &&
         llvm::all_of(def->getOperands(),
                      [&](Value operand) {
                        auto t = dyn_cast<RankedTensorType>(operand.getType());
                        return t && t.getRank() <= rank;
                      }) &&
         rankOf(def->getOperand(0)) == rank &&
         !isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ArgmaxOp, GatherOp,
              ConcatOp>(def))) {
      if (isa<SliceOp>(def))
        return operandAxis(def->getOperand(0), axis);
      for (Value operand : def->getOperands()) {
        auto t = cast<RankedTensorType>(operand.getType());
        const int64_t a = axis - (rank - t.getRank());
        if (a >= 0 && t.getDimSize(a) == type.getDimSize(axis) &&
            operandAxis(operand, a))
          return true;
      }
      return false;
    }
    return true;
  }

  /// The first and the last position an index tensor holds when it is
  /// fixed at compile time (`arange(p, q)`, a constant), else none.
  static std::optional<std::pair<int64_t, int64_t>>
  fixedPositions(Value indices) {
    auto type = dyn_cast<RankedTensorType>(indices.getType());
    if (!type || !type.hasStaticShape() || type.getNumElements() < 1)
      return std::nullopt;
    if (auto arange = indices.getDefiningOp<ArangeOp>())
      return std::make_pair(arange.getStart(),
                            arange.getStart() + type.getNumElements() - 1);
    if (auto constant = indices.getDefiningOp<ConstantOp>())
      if (auto dense = dyn_cast<DenseIntElementsAttr>(constant.getValue())) {
        int64_t first = (*dense.begin()).getSExtValue(), last = first;
        for (const APInt &value : dense.getValues<APInt>()) {
          first = std::min(first, value.getSExtValue());
          last = std::max(last, value.getSExtValue());
        }
        return std::make_pair(first, last);
      }
    return std::nullopt;
  }

  /// A `@source` or `@tokens` input whose texts the executable pads: a
  /// length dim after the batch.
  static bool isPaddedText(BlockArgument arg, StringAttr role,
                           StringAttr name) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    return role && name &&
           (role.getValue() == "source" || role.getValue() == "tokens") &&
           type && type.getRank() >= 2 && type.isDynamicDim(1);
  }

  /// Whether a mask that reaches the entry's results reads `ids` (through
  /// reshapes): padding_mask or a comparison (a mask computed and then
  /// not used masks nothing).
  static bool readByMask(Value ids) {
    for (Operation *user : ids.getUsers()) {
      if (isa<PaddingMaskOp, CmpOp>(user) && reachesResults(user))
        return true;
      if (auto reshape = dyn_cast<ReshapeOp>(user))
        if (readByMask(reshape.getResult()))
          return true;
    }
    return false;
  }

  /// Whether `value` reaches an entry's results (reachesResults of its
  /// users: one result of an op of several).
  static bool valueReachesResults(Value value) {
    for (Operation *user : value.getUsers())
      if (reachesResults(user))
        return true;
    return false;
  }

  /// Whether a result of `op` flows into its function's return.
  static bool reachesResults(Operation *op) {
    llvm::SmallPtrSet<Operation *, 32> seen;
    llvm::SmallVector<Operation *> work{op};
    while (!work.empty()) {
      Operation *current = work.pop_back_val();
      if (!seen.insert(current).second)
        continue;
      if (current->hasTrait<OpTrait::ReturnLike>())
        return true;
      for (Value result : current->getResults())
        for (Operation *user : result.getUsers())
          work.push_back(user);
    }
    return false;
  }

  /// Calls `visit(entry, argument, its role, its name)` for every argument
  /// of every entry with a body (role and name null where absent).
  template <typename Visit> void forEachEntryInput(const Visit &visit) {
    for (auto func : module.getOps<func::FuncOp>()) {
      if (!func->hasAttr("tx.entry") || func.isExternal())
        continue;
      for (BlockArgument arg : func.getArguments())
        visit(func, arg,
              func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kRoleAttr),
              func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "tx.name"));
    }
  }

  /// The value of a splat float constant, if `value` is one.
  static std::optional<double> splatFloat(Value value) {
    auto constant = value.getDefiningOp<ConstantOp>();
    auto dense =
        constant ? dyn_cast<DenseFPElementsAttr>(constant.getValue()) : nullptr;
    if (!dense || !dense.isSplat())
      return std::nullopt;
    return dense.getSplatValue<APFloat>().convertToDouble();
  }

  /// The sense of a mask value, from the senses of the comparisons found
  /// (`sense`: +1 true at the tokens, -1 true at the pad), through not,
  /// reshapes, float(), and with other masks such as causal ones: +1, -1,
  /// or 0 when not known.
  static int maskSense(Value value,
                       const llvm::DenseMap<Operation *, int> &sense,
                       int depth = 0) {
    Operation *def = value.getDefiningOp();
    if (!def || depth > 16)
      return 0;
    if (auto it = sense.find(def); it != sense.end())
      return it->second;
    if (isa<NotOp>(def))
      return -maskSense(def->getOperand(0), sense, depth + 1);
    if (isa<ReshapeOp, ToFloatOp, BroadcastToOp>(def))
      return maskSense(def->getOperand(0), sense, depth + 1);
    if (isa<AndOp, OrOp>(def)) {
      const int a = maskSense(def->getOperand(0), sense, depth + 1);
      return a ? a : maskSense(def->getOperand(1), sense, depth + 1);
    }
    // where(m, 1.0, 0.0) is float(m); where(m, 0.0, 1.0) float(!m).
    if (isa<WhereOp>(def)) {
      const std::optional<double> a = splatFloat(def->getOperand(1)),
                                  b = splatFloat(def->getOperand(2));
      if (a && b && *a != *b) {
        const int condition = maskSense(def->getOperand(0), sense, depth + 1);
        return *a > *b ? condition : -condition;
      }
    }
    // 1 - mask: the other sense (an additive mask's (1 - m) * -1e9).
    if (auto sub = dyn_cast<SubOp>(def))
      if (auto one = sub.getLhs().getDefiningOp<ConstantOp>())
        if (auto dense = dyn_cast<DenseFPElementsAttr>(one.getValue());
            dense && dense.isSplat() &&
            dense.getSplatValue<APFloat>().convertToDouble() == 1.0)
          return -maskSense(sub.getRhs(), sense, depth + 1);
    return 0;
  }

  /// `ids == X` or an order comparison (`ids > 5`) read only as numbers
  /// (`float(ids == eos)`, `where(ids > 5, 1.0, 0.0)`: an indicator
  /// feature, a selector), not as a mask of positions to keep or fill.
  /// (`float(ids != pad)` is a masked mean's weights: a mask.)
  static bool isSelector(Operation *op) {
    auto cmp = dyn_cast<CmpOp>(op);
    if (!cmp || cmp.getPredicate() == CmpPredicate::ne ||
        cmp.getResult().use_empty())
      return false;
    auto constant = [](Value value) {
      return static_cast<bool>(value.getDefiningOp<ConstantOp>());
    };
    return llvm::all_of(cmp.getResult().getUsers(), [&](Operation *user) {
      if (isa<ToFloatOp>(user))
        return true;
      auto where = dyn_cast<WhereOp>(user);
      return where && where->getOperand(0) == cmp.getResult() &&
             constant(where->getOperand(1)) && constant(where->getOperand(2));
    });
  }

  /// Whether the mask `op` makes is and-ed or or-ed (through reshapes and
  /// nots) with one of `others`.
  static bool joinedWithAny(Operation *op,
                            const llvm::SmallPtrSetImpl<Operation *> &others) {
    auto through = [](Value value) {
      while (Operation *def = value.getDefiningOp()) {
        if (!isa<ReshapeOp, NotOp>(def))
          break;
        value = def->getOperand(0);
      }
      return value.getDefiningOp();
    };
    SmallVector<Value> work = {op->getResult(0)};
    for (size_t i = 0; i < work.size() && i < 64; ++i)
      for (Operation *user : work[i].getUsers()) {
        if (isa<ReshapeOp, NotOp>(user)) {
          work.push_back(user->getResult(0));
          continue;
        }
        if (!isa<AndOp, OrOp>(user))
          continue;
        for (Value operand : user->getOperands())
          if (Operation *def = through(operand); def && others.count(def))
            return true;
        work.push_back(user->getResult(0));
      }
    return false;
  }

  /// Calls `found(op, MaskUse)` for each padding mask of `ids` (through
  /// reshapes): `padding_mask(ids, id)` and `ids != id` / `ids == id` with
  /// a constant id (relation ""), and an order comparison with a constant
  /// (`ids > 0`; relation "ids > 0", ids on the left). `onPad`: the id is
  /// `padId`, or an order comparison gives the
  /// pad the value of at most half the other `vocab` ids (it tells the pad
  /// from most ids); `constant`: it gives every id one value. `ids > 0` or
  /// `ids >= 3` with `pad = 3`, and `ids >= 0`, keep the padding with the
  /// tokens (said nothing); `ids >= 4` or `ids > 0` with `pad = 0` and
  /// `ids < 15` with `pad = 15` tell it apart.
  template <typename Found>
  static void forEachMaskId(Value ids, int64_t padId, int64_t vocab,
                            const Found &found) {
    for (Operation *user : ids.getUsers()) {
      if (auto reshape = dyn_cast<ReshapeOp>(user)) {
        forEachMaskId(reshape.getResult(), padId, vocab, found);
      } else if (auto mask = dyn_cast<PaddingMaskOp>(user)) {
        const int64_t id = int64_t(mask.getPad());
        found(user, MaskUse{id, "", id == padId, false, padId != id});
      } else if (auto cmp = dyn_cast<CmpOp>(user)) {
        const bool idsLeft = cmp.getLhs() == ids;
        Value other = idsLeft ? cmp.getRhs() : cmp.getLhs();
        auto constant = other.getDefiningOp<ConstantOp>();
        auto value = constant
                         ? dyn_cast<DenseIntElementsAttr>(constant.getValue())
                         : nullptr;
        if (!value || !value.isSplat())
          continue;
        const int64_t id = value.getSplatValue<APInt>().getSExtValue();
        CmpPredicate predicate = cmp.getPredicate();
        if (predicate == CmpPredicate::ne || predicate == CmpPredicate::eq) {
          found(user,
                MaskUse{id, "", id == padId, false,
                        (predicate == CmpPredicate::eq) == (padId == id)});
          continue;
        }
        // With the ids on the left: `0 < ids` is `ids > 0`.
        if (!idsLeft)
          predicate = predicate == CmpPredicate::lt   ? CmpPredicate::gt
                      : predicate == CmpPredicate::le ? CmpPredicate::ge
                      : predicate == CmpPredicate::gt ? CmpPredicate::lt
                                                      : CmpPredicate::le;
        const char *symbol = predicate == CmpPredicate::lt   ? "<"
                             : predicate == CmpPredicate::le ? "<="
                             : predicate == CmpPredicate::gt ? ">"
                                                             : ">=";
        auto holds = [&](int64_t x) {
          switch (predicate) {
          case CmpPredicate::lt:
            return x < id;
          case CmpPredicate::le:
            return x <= id;
          case CmpPredicate::gt:
            return x > id;
          default:
            return x >= id;
          }
        };
        // How many of the other ids [0, vocab) it gives the pad's value.
        auto clamp = [&](int64_t n) {
          return std::clamp<int64_t>(n, 0, vocab);
        };
        const int64_t trues = predicate == CmpPredicate::lt   ? clamp(id)
                              : predicate == CmpPredicate::le ? clamp(id + 1)
                              : predicate == CmpPredicate::gt
                                  ? clamp(vocab - 1 - id)
                                  : clamp(vocab - id);
        const bool padIsId = padId >= 0 && padId < vocab;
        const int64_t others = vocab - (padIsId ? 1 : 0);
        const int64_t sameAsPad =
            (holds(padId) ? trues : vocab - trues) - (padIsId ? 1 : 0);
        found(user,
              MaskUse{
                  id, std::string("ids ") + symbol + " " + std::to_string(id),
                  2 * sameAsPad <= others, sameAsPad == others, holds(padId)});
      }
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
