//===- MLIRGenTest.cpp - spec to tx IR, and robustness on broken specs ----===//
//
// Unit tests of frontend/lib/MLIRGen.cpp: parameter naming and sharing,
// def inlining with `as` scopes, constant folding, and a fuzz test that
// feeds thousands of mutated versions of the shipped examples through the
// whole frontend (parse, config, MLIRGen) and requires that each either
// produces verified IR or reports an error — never a crash or a hang.
//
//===----------------------------------------------------------------------===//
#include "txc/Frontend/MLIRGen.h"
#include "tx/Dialect/TxDialect.h"
#include "txc/Frontend/ConstEval.h"
#include "txc/Frontend/Diagnostics.h"
#include "txc/Frontend/Parser.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

using namespace mlir;

namespace {

struct Result {
  OwningOpRef<ModuleOp> module;
  std::string errors;
  unsigned numErrors = 0;
};

class MLIRGenTest : public ::testing::Test {
protected:
  MLIRGenTest() { context.loadDialect<tx::TxDialect, func::FuncDialect>(); }

  Result generate(const std::string &text,
                  const std::vector<std::string> &defines = {}) {
    Result result;
    txc::SourceFile file("test.tx", text);
    txc::DiagnosticEngine diags(file);
    std::unique_ptr<txc::ast::Module> ast = txc::parseSpec(file, diags);
    if (!diags.hasErrors()) {
      txc::ConfigEnv env = txc::evaluateConfig(*ast, defines, diags);
      if (!diags.hasErrors())
        result.module = txc::mlirGen(context, *ast, env, diags);
    }
    std::ostringstream os;
    diags.print(os);
    result.errors = os.str();
    result.numErrors = diags.getNumErrors();
    return result;
  }

  std::vector<std::string> paramNames(ModuleOp module) {
    std::vector<std::string> names;
    for (auto param : module.getOps<tx::ParameterOp>())
      names.push_back(param.getSymName().str());
    return names;
  }

  MLIRContext context;
};

std::string readExample(const std::string &relative) {
  std::ifstream in(std::string(TXC_SOURCE_DIR) + "/" + relative);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

TEST_F(MLIRGenTest, ParametersAreNamedByTheAsPath) {
  Result r = generate(R"(
config d = 8
dim B <= 4
def block(x) { return layer_norm(x + linear(x, d) as proj) as norm }
entry e(x: [B, d]) -> y {
  y = x
  for i in 0..2 { y = block(y) as layers[i] }
}
)");
  ASSERT_TRUE(r.module) << r.errors;
  std::vector<std::string> expected = {
      "layers.0.proj.weight", "layers.0.proj.bias",   "layers.0.norm.weight",
      "layers.0.norm.bias",   "layers.1.proj.weight", "layers.1.proj.bias",
      "layers.1.norm.weight", "layers.1.norm.bias"};
  EXPECT_EQ(paramNames(*r.module), expected);
}

TEST_F(MLIRGenTest, SameNameSharesOneParameter) {
  Result r = generate(R"(
dim B <= 4
entry a(x: [B, 8]) -> y { y = linear(x, 8) as shared }
entry b(x: [B, 8]) -> y { y = linear(x, 8) as shared }
)");
  ASSERT_TRUE(r.module) << r.errors;
  EXPECT_EQ(paramNames(*r.module).size(), 2u);
}

TEST_F(MLIRGenTest, InitializersFollowTheSeeds) {
  Result r = generate(R"(
dim B <= 4
entry e(ids: i32[B, 3]) -> y {
  y = layer_norm(linear(embedding(ids, 10, 8) as emb, 4) as proj) as norm
}
)");
  ASSERT_TRUE(r.module) << r.errors;
  std::map<std::string, tx::Init> inits;
  for (auto param : r.module->getOps<tx::ParameterOp>())
    inits[param.getSymName().str()] = param.getInit();
  EXPECT_EQ(inits["emb.weight"], tx::Init::xavier_uniform);
  EXPECT_EQ(inits["proj.weight"], tx::Init::xavier_uniform);
  EXPECT_EQ(inits["proj.bias"], tx::Init::zeros);
  EXPECT_EQ(inits["norm.weight"], tx::Init::ones);
  EXPECT_EQ(inits["norm.bias"], tx::Init::zeros);
}

TEST_F(MLIRGenTest, DefinesOverrideConfigBeforeDependentsAreEvaluated) {
  std::string spec = R"(
config d_model = 512, heads = 8
config d_k = d_model // heads
dim B <= 4
entry e(x: [B, d_model]) -> y { y = linear(x, d_k) as proj }
)";
  Result r = generate(spec, {"d_model=64"});
  ASSERT_TRUE(r.module) << r.errors;
  auto weight = *r.module->getOps<tx::ParameterOp>().begin();
  EXPECT_EQ(weight.getTensorType().getShape(), ArrayRef<int64_t>({8, 64}));
}

TEST_F(MLIRGenTest, EntriesCarryNamesAndKinds) {
  Result r = generate(R"(
dim B <= 4, S <= 9
entry encode(src: i32[B, S]) -> memory { memory = padding_mask(src) }
)");
  ASSERT_TRUE(r.module) << r.errors;
  auto func = *r.module->getOps<func::FuncOp>().begin();
  EXPECT_EQ(func->getAttrOfType<StringAttr>("tx.entry").getValue(), "encode");
  EXPECT_EQ(func.getArgAttrOfType<StringAttr>(0, "tx.name").getValue(), "src");
  EXPECT_EQ(func.getResultAttrOfType<StringAttr>(0, "tx.name").getValue(),
            "memory");
}

TEST_F(MLIRGenTest, SeveralErrorsInOneRun) {
  Result r = generate(R"(
dim B <= 4
entry e(x: [B, 8]) -> y {
  a = relu(q)
  b = sotfmax(x)
  y = linear(x, 8)
}
)");
  EXPECT_FALSE(r.module);
  EXPECT_EQ(r.numErrors, 3u) << r.errors;
  EXPECT_NE(r.errors.find("test.tx:4:12: error: unknown name 'q'"),
            std::string::npos)
      << r.errors;
  EXPECT_NE(r.errors.find("test.tx:5:7: error: unknown function 'sotfmax'"),
            std::string::npos)
      << r.errors;
  EXPECT_NE(r.errors.find("test.tx:6:7: error: 'linear' creates parameters"),
            std::string::npos)
      << r.errors;
}

TEST_F(MLIRGenTest, ShippedExamplesGenerateVerifiedIR) {
  for (const char *path :
       {"examples/transformer/base.tx", "examples/translate/model.tx",
        "examples/copy/model.tx"}) {
    Result r = generate(readExample(path));
    ASSERT_TRUE(r.module) << path << "\n" << r.errors;
    EXPECT_TRUE(succeeded(verify(*r.module))) << path;
  }
}

/// Mutates `text` once: deletes, duplicates or swaps a span, or inserts a
/// token that often breaks shapes or syntax.
std::string mutate(const std::string &text, std::mt19937 &rng) {
  static const char *tokens[] = {
      "(",       ")",  "[",  "]",      ",",       "=",   "+",   "*",
      "..",      "as", "!",  "&",      "0",       "-1",  "1e9", "x",
      "d_model", "B",  "S",  "linear", "softmax", "for", "{",   "}",
      "return",  "#",  "\n", "bool",   "i32",     "1.5", "T",   "heads",
      ":",       "...", "::", "-9",    "chunk",   "a, b"};
  if (text.empty())
    return text;
  std::uniform_int_distribution<size_t> pos(0, text.size() - 1);
  size_t a = pos(rng), b = pos(rng);
  if (a > b)
    std::swap(a, b);
  b = std::min(b, a + 40);
  switch (rng() % 4) {
  case 0:
    return text.substr(0, a) + text.substr(b);
  case 1:
    return text.substr(0, b) + text.substr(a, b - a) + text.substr(b);
  case 2: {
    size_t c = pos(rng);
    std::string copy = text;
    std::swap(copy[a], copy[c]);
    return copy;
  }
  default:
    return text.substr(0, a) + " " +
           tokens[rng() % (sizeof(tokens) / sizeof(*tokens))] + " " +
           text.substr(a);
  }
}

TEST_F(MLIRGenTest, MutatedSpecsNeverCrash) {
  // TXC_FUZZ_ITERATIONS and TXC_FUZZ_SEED make longer runs by hand.
  const char *iterationsEnv = std::getenv("TXC_FUZZ_ITERATIONS");
  const char *seedEnv = std::getenv("TXC_FUZZ_SEED");
  int iterations = iterationsEnv ? std::atoi(iterationsEnv) : 1500;
  std::mt19937 rng(seedEnv ? std::atoi(seedEnv) : 20261122);
  unsigned accepted = 0, rejected = 0;
  for (const char *path :
       {"examples/translate/model.tx", "examples/copy/model.tx"}) {
    std::string original = readExample(path);
    for (int i = 0; i < iterations; ++i) {
      std::string text = original;
      for (unsigned n = 1 + rng() % 3; n > 0; --n)
        text = mutate(text, rng);
      Result r = generate(text);
      if (r.module) {
        ASSERT_TRUE(succeeded(verify(*r.module))) << text;
        ++accepted;
      } else {
        ASSERT_GT(r.numErrors, 0u) << "no module and no error for:\n" << text;
        ++rejected;
      }
    }
  }
  // Most mutations break the spec; some (inside comments) do not.
  EXPECT_GT(rejected, static_cast<unsigned>(iterations));
  RecordProperty("accepted", accepted);
}

/// Subscripts and the indexing builtins, for the mutation tests.
const char *indexingSpec = R"(model idx
config d = 8, max_len = 16, vocab = 32
dim B <= 4, T <= max_len
def rotate_half(x) {
  return concat(-x[..., d/2:], x[..., :d/2], axis = -1)
}
entry train(ids: i32[B, T], r: [B, d]) -> loss {
  wte = param(vocab, d) as wte
  wpe = param(max_len, d) as wpe
  h = wte[ids] + wpe[arange(T)] + wpe[:T][None]
  u = (ids != 0)[:, None, None, :]
  a, b = chunk(rotate_half(h), 2, axis = -1)
  p, q = split(stack(a, b, axis = -1)[..., 0], 3, 1, axis = 2)
  c = concat(p, index_select(q, 1, ids[0]), h[:, :, 1:8:2], axis = -1)
  loss = reduce_sum(reduce_sum(select(c, 1, -1) * r, -1), -1)
}
optimizer adam(lr = 0.001)
)";

TEST_F(MLIRGenTest, IndexingSpecGeneratesVerifiedIR) {
  Result r = generate(indexingSpec);
  ASSERT_TRUE(r.module) << r.errors;
  EXPECT_TRUE(succeeded(verify(*r.module)));
}

TEST_F(MLIRGenTest, MutatedIndexingSpecsNeverCrash) {
  const char *iterationsEnv = std::getenv("TXC_FUZZ_ITERATIONS");
  int iterations = iterationsEnv ? std::atoi(iterationsEnv) : 1500;
  const char *seedEnv = std::getenv("TXC_FUZZ_SEED");
  std::mt19937 rng(seedEnv ? std::atoi(seedEnv) : 20260514);
  unsigned rejected = 0;
  for (int i = 0; i < iterations; ++i) {
    std::string text = indexingSpec;
    for (unsigned n = 1 + rng() % 3; n > 0; --n)
      text = mutate(text, rng);
    Result r = generate(text);
    if (r.module) {
      ASSERT_TRUE(succeeded(verify(*r.module))) << text;
    } else {
      ASSERT_GT(r.numErrors, 0u) << "no module and no error for:\n" << text;
      ++rejected;
    }
  }
  EXPECT_GT(rejected, static_cast<unsigned>(iterations / 2));
  std::string original = indexingSpec;
  for (size_t end = 0; end < original.size(); end += 3) {
    Result r = generate(original.substr(0, end));
    if (!r.module) {
      ASSERT_GT(r.numErrors, 0u) << original.substr(0, end);
    }
  }
}

TEST_F(MLIRGenTest, EveryPrefixOfASpecIsHandled) {
  std::string original = readExample("examples/copy/model.tx");
  for (size_t end = 0; end < original.size(); end += 7) {
    Result r = generate(original.substr(0, end));
    if (!r.module) {
      ASSERT_GT(r.numErrors, 0u) << original.substr(0, end);
    }
  }
}

//===----------------------------------------------------------------------===//
// Long specs: the work stays proportionate to the text
//===----------------------------------------------------------------------===//

// Each of these used to take minutes (or tens of GiB) because of a step that
// was quadratic in the length of a list: config lookups by linear search,
// "did you mean" candidates collected for every constant, keyword arguments
// matched by linear search, entry argument names set one list at a time.
// Linear, each takes about a second here; the bound of 20 s leaves a wide
// margin for a loaded machine while the quadratic versions take minutes.

/// The seconds `fn` takes to run.
template <typename Fn> double secondsOf(Fn &&fn) {
  auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start)
      .count();
}

TEST_F(MLIRGenTest, ManyConfigValuesAreLookedUpByName) {
  const int n = 300000;
  std::string text = "config a0 = 1";
  for (int i = 1; i < n; ++i)
    text += ", a" + std::to_string(i) + " = a" + std::to_string(i - 1);
  text += "\ndim B <= 4\nentry e(x: [B, 8]) -> z { z = x * a" +
          std::to_string(n - 1) + " }\n";
  Result r;
  EXPECT_LT(secondsOf([&] { r = generate(text); }), 20.0);
  ASSERT_TRUE(r.module) << r.errors.substr(0, 2000);
}

TEST_F(MLIRGenTest, ManyLocalNamesDoNotSlowConstants) {
  std::string text = "dim B <= 4\nentry e(x: [B, 8]) -> z {\n";
  for (int i = 0; i < 100000; ++i)
    text += "  a" + std::to_string(i) + " = " + std::to_string(i) + "\n";
  text += "  z = x\n  for i in 0..200 { for j in 0..1000 { y = i } }\n}\n";
  Result r;
  EXPECT_LT(secondsOf([&] { r = generate(text); }), 20.0);
  ASSERT_TRUE(r.module) << r.errors.substr(0, 2000);
}

TEST_F(MLIRGenTest, ManyParametersAndKeywordArguments) {
  const int n = 200000, inputs = 10000;
  std::string params, args, typed;
  for (int i = 0; i < n; ++i) {
    std::string name = "p" + std::to_string(i);
    params += (i ? ", " : "") + name;
    args += (i ? ", " : "") + name + " = x";
    if (i < inputs)
      typed += (i ? ", " : "") + name + ": [B, 8]";
  }
  std::string text = "dim B <= 4\ndef f(" + params + ") { return p0 }\n" +
                     "entry e(x: [B, 8]) -> z { z = f(" + args + ") }\n" +
                     "entry g(" + typed + ") -> z { z = relu(p1) }\n";
  Result r;
  EXPECT_LT(secondsOf([&] { r = generate(text); }), 20.0);
  ASSERT_TRUE(r.module) << r.errors.substr(0, 2000);
  auto g = r.module->lookupSymbol<func::FuncOp>("g");
  ASSERT_TRUE(g);
  EXPECT_EQ(g.getArgAttrOfType<StringAttr>(inputs - 1, "tx.name").getValue(),
            "p" + std::to_string(inputs - 1));
}

TEST_F(MLIRGenTest, ManyErrorsAreCountedAndTheFirstShown) {
  std::string text = "config a0 = b0";
  for (int i = 1; i < 100000; ++i)
    text += ", a" + std::to_string(i) + " = b" + std::to_string(i);
  text += "\n";
  Result r = generate(text);
  EXPECT_EQ(r.numErrors, 100000u);
  EXPECT_NE(r.errors.find("note: 99900 more errors not shown (txc shows the "
                          "first 100)"),
            std::string::npos);
  // One long line: each error shows a window of it, not all of it.
  EXPECT_LT(r.errors.size(), 100u * 600u);
}

} // namespace
