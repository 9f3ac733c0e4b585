//===- FrontendTestUtil.h - helpers for the frontend unit tests -*- C++ -*-===//
//
// A parsed spec with its file and diagnostics kept alive together, a
// fully-parenthesized expression dump for precedence tests, and the sample
// spec (the paper's Transformer in the spec language) most tests start from.
//
//===----------------------------------------------------------------------===//
#ifndef TXC_TEST_UNIT_FRONTEND_FRONTENDTESTUTIL_H
#define TXC_TEST_UNIT_FRONTEND_FRONTENDTESTUTIL_H

#include "txc/Frontend/AST.h"
#include "txc/Frontend/Diagnostics.h"
#include "txc/Frontend/Parser.h"

#include <memory>
#include <sstream>
#include <string>

namespace txc {
namespace test {

/// A spec parsed from text; owns everything the diagnostics point into.
struct Parsed {
  explicit Parsed(const std::string &text, const std::string &name = "t.tx")
      : file(std::make_unique<SourceFile>(name, text)),
        diags(std::make_unique<DiagnosticEngine>(*file)),
        module(parseSpec(*file, *diags)) {}

  /// Every diagnostic, formatted.
  std::string report() const {
    std::ostringstream os;
    diags->print(os);
    return os.str();
  }
  unsigned errors() const { return diags->getNumErrors(); }

  std::unique_ptr<SourceFile> file;
  std::unique_ptr<DiagnosticEngine> diags;
  std::unique_ptr<ast::Module> module;
};

/// `(+ a (* b c))`: the tree shape of an expression, operators prefix.
inline std::string sexpr(const ast::Expr *e) {
  using namespace ast;
  if (!e)
    return "<null>";
  switch (e->getKind()) {
  case Expr::Kind::Number:
  case Expr::Kind::Bool:
  case Expr::Kind::Name:
    return print(*e);
  case Expr::Kind::Unary: {
    const auto *u = static_cast<const UnaryExpr *>(e);
    return std::string("(") + (u->op == UnaryOp::Neg ? "-" : "!") + " " +
           sexpr(u->operand.get()) + ")";
  }
  case Expr::Kind::Binary: {
    const auto *b = static_cast<const BinaryExpr *>(e);
    return std::string("(") + spelling(b->op) + " " + sexpr(b->lhs.get()) +
           " " + sexpr(b->rhs.get()) + ")";
  }
  case Expr::Kind::Call: {
    const auto *c = static_cast<const CallExpr *>(e);
    std::string out = "(call " + c->callee;
    for (const Arg &arg : c->args)
      out += " " + (arg.keyword.empty() ? "" : arg.keyword + "=") +
             sexpr(arg.value.get());
    for (size_t i = 0; i < c->scope.size(); ++i) {
      out += i ? "." : " as ";
      out += c->scope[i].name;
      if (c->scope[i].index)
        out += "[" + sexpr(c->scope[i].index.get()) + "]";
    }
    return out + ")";
  }
  case Expr::Kind::Subscript: {
    const auto *s = static_cast<const SubscriptExpr *>(e);
    std::string out = "(index " + sexpr(s->base.get());
    for (const Index &index : s->indices) {
      out += " ";
      switch (index.kind) {
      case Index::Kind::Ellipsis:
        out += "...";
        break;
      case Index::Kind::Single:
        out += sexpr(index.value.get());
        break;
      case Index::Kind::Slice:
        out += (index.start ? sexpr(index.start.get()) : "") + ":" +
               (index.stop ? sexpr(index.stop.get()) : "") +
               (index.step ? ":" + sexpr(index.step.get()) : "");
        break;
      }
    }
    return out + ")";
  }
  }
  return "?";
}

/// Parses `text` as a single expression; "" and the diagnostics on failure.
inline std::string parseToSexpr(const std::string &text,
                                std::string *errors = nullptr) {
  SourceFile file("e.tx", text);
  DiagnosticEngine diags(file);
  ast::ExprPtr e = parseExpression(file, diags);
  if (errors) {
    std::ostringstream os;
    diags.print(os);
    *errors = os.str();
  }
  return e ? sexpr(e.get()) : "";
}

/// The paper's Transformer, written the way docs/spec-language.md teaches.
inline const char *sampleSpec() {
  return R"(# Attention Is All You Need: post-norm encoder-decoder.
model transformer
config d_model = 512, heads = 8, layers = 6, d_ff = 2048, dropout = 0.1
config src_vocab = 8000, tgt_vocab = 8000, max_len = 256, pad = 0
config label_smoothing = 0.1, d_k = d_model // heads
dim B <= 64, S <= max_len, T <= max_len

def attention(q: [B, Tq, d_model], kv: [B, Tk, d_model], mask: bool[B, 1, Tq, Tk]) {
  Q = split_heads(linear(q, d_model) as W_q, heads)
  K = split_heads(linear(kv, d_model) as W_k, heads)
  V = split_heads(linear(kv, d_model) as W_v, heads)
  scores = matmul(Q, transpose(K)) / sqrt(d_model / heads)
  probs = dropout(softmax(masked_fill(scores, !mask, -1e9)), dropout)
  return linear(merge_heads(matmul(probs, V)), d_model) as W_o
}

def ffn(x) {
  h = dropout(relu(linear(x, d_ff) as linear1), dropout)
  return linear(h, d_model) as linear2
}

def encoder_layer(x, mask) {
  x = layer_norm(x + dropout(attention(x, x, mask) as self_attn, dropout)) as norm1
  return layer_norm(x + dropout(ffn(x) as feed_forward, dropout)) as norm2
}

def embed(ids, vocab) {
  x = embedding(ids, vocab, d_model) as embed * sqrt(d_model)
  return dropout(x + positional_encoding(x), dropout)
}

entry train(src: i32[B, S], tgt_in: i32[B, T], tgt_out: i32[B, T]) -> loss {
  x = embed(src, src_vocab) as src_embed
  mask = padding_mask(src, pad)
  for i in 0..layers {
    x = encoder_layer(x, mask) as encoder.layers[i]
  }
  logits = linear(x, tgt_vocab, bias = false) as generator
  loss = cross_entropy(logits, tgt_out, ignore_index = pad, label_smoothing = label_smoothing)
}

optimizer adam(lr = noam(d_model, warmup = 4000), beta1 = 0.9, beta2 = 0.98, eps = 1e-9)
)";
}

} // namespace test
} // namespace txc

#endif // TXC_TEST_UNIT_FRONTEND_FRONTENDTESTUTIL_H
