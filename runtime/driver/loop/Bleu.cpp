//===- Bleu.cpp - corpus BLEU-4 (Papineni et al. 2002) --------------------===//
#include "loop/Bleu.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>

namespace txrt::driver {

namespace {

using NgramCounts = std::map<std::vector<std::string>, int64_t>;

NgramCounts countNgrams(const std::vector<std::string> &words, size_t order) {
  NgramCounts counts;
  for (size_t i = 0; i + order <= words.size(); ++i)
    ++counts[std::vector<std::string>(words.begin() + std::ptrdiff_t(i),
                                      words.begin() +
                                          std::ptrdiff_t(i + order))];
  return counts;
}

} // namespace

void BleuAccumulator::add(const std::vector<std::string> &hypothesis,
                          const std::vector<std::string> &reference) {
  hypothesisLength_ += int64_t(hypothesis.size());
  referenceLength_ += int64_t(reference.size());
  for (size_t n = 1; n <= size_t(kBleuMaxOrder); ++n) {
    NgramCounts hyp = countNgrams(hypothesis, n);
    NgramCounts ref = countNgrams(reference, n);
    for (const auto &[ngram, count] : hyp) {
      auto found = ref.find(ngram);
      if (found != ref.end())
        matches_[n - 1] += std::min(count, found->second);
    }
    if (hypothesis.size() >= n)
      totals_[n - 1] += int64_t(hypothesis.size() - n + 1);
  }
}

BleuScore BleuAccumulator::score() const {
  BleuScore score;
  score.hypothesisLength = hypothesisLength_;
  score.referenceLength = referenceLength_;
  double logSum = 0;
  bool zero = false;
  score.order = 0;
  for (int n = 0; n < kBleuMaxOrder; ++n) {
    if (totals_[n] == 0) // no n-grams of this order anywhere: not counted
      continue;
    ++score.order;
    if (matches_[n] == 0) {
      zero = true;
      continue;
    }
    double p = double(matches_[n]) / double(totals_[n]);
    score.precisions[n] = 100.0 * p;
    logSum += std::log(p);
  }
  if (referenceLength_ > 0)
    score.lengthRatio = double(hypothesisLength_) / double(referenceLength_);
  if (hypothesisLength_ == 0)
    score.brevityPenalty = 0;
  else if (hypothesisLength_ > referenceLength_)
    score.brevityPenalty = 1;
  else
    score.brevityPenalty = std::exp(1.0 - double(referenceLength_) /
                                              double(hypothesisLength_));
  score.bleu = zero || score.order == 0
                   ? 0.0
                   : 100.0 * score.brevityPenalty *
                         std::exp(logSum / double(score.order));
  return score;
}

BleuScore BleuAccumulator::sacreBleuScore() const {
  BleuScore score;
  score.hypothesisLength = hypothesisLength_;
  score.referenceLength = referenceLength_;
  score.order = kBleuMaxOrder;
  if (referenceLength_ > 0)
    score.lengthRatio = double(hypothesisLength_) / double(referenceLength_);
  if (hypothesisLength_ >= referenceLength_)
    score.brevityPenalty = 1;
  else if (hypothesisLength_ > 0)
    score.brevityPenalty = std::exp(1.0 - double(referenceLength_) /
                                              double(hypothesisLength_));
  // sacreBLEU's early stop: no matched n-gram of any order is BLEU 0 with
  // zero precisions (its 'exp' smoothing gave a positive score to a corpus
  // with no match at all).
  bool anyMatch = false;
  for (int n = 0; n < kBleuMaxOrder; ++n)
    anyMatch |= matches_[n] > 0;
  if (!anyMatch)
    return score;
  double smoothing = 1;
  for (int n = 0; n < kBleuMaxOrder; ++n) {
    if (totals_[n] == 0)
      break;
    if (matches_[n] == 0) {
      smoothing *= 2;
      score.precisions[n] = 100.0 / (smoothing * double(totals_[n]));
    } else {
      score.precisions[n] = 100.0 * double(matches_[n]) / double(totals_[n]);
    }
  }
  double logSum = 0;
  for (double precision : score.precisions)
    logSum += precision > 0 ? std::log(precision) : -9999999999.0;
  score.bleu = score.brevityPenalty * std::exp(logSum / kBleuMaxOrder);
  return score;
}

namespace {

/// One pass of Python's re.sub over `text`: at each position `match`
/// returns the length it matches (0: none) and `replace` writes the
/// replacement; matches do not overlap.
template <typename Match, typename Replace>
std::string substitute(const std::string &text, Match match, Replace replace) {
  std::string out;
  out.reserve(text.size() * 2);
  size_t i = 0;
  while (i < text.size()) {
    size_t length = match(text, i);
    if (length == 0) {
      out += text[i++];
      continue;
    }
    replace(out, text, i);
    i += length;
  }
  return out;
}

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isDotOrComma(char c) { return c == '.' || c == ','; }

/// The class [{-~[-` -&(-+:-@/] of 13a's first pass.
bool isIsolated13a(char c) {
  return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') ||
         (c >= ' ' && c <= '&') || (c >= '(' && c <= '+') ||
         (c >= ':' && c <= '@') || c == '/';
}

void replaceAll(std::string &text, std::string_view from,
                std::string_view to) {
  for (size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

/// The length in bytes of the whitespace character (Python's str.isspace:
/// ASCII \t-\r, \x1c-\x20 and Unicode's spaces, UTF-8 encoded) at `i`,
/// 0 when there is none.
size_t unicodeSpaceLength(std::string_view s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  if ((c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20))
    return 1;
  auto at = [&](size_t k) {
    return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0;
  };
  if (c == 0xC2 && (at(1) == 0x85 || at(1) == 0xA0))
    return 2; // U+0085, U+00A0
  if (c == 0xE1 && at(1) == 0x9A && at(2) == 0x80)
    return 3; // U+1680
  if (c == 0xE2 && at(1) == 0x80 &&
      ((at(2) >= 0x80 && at(2) <= 0x8A) || at(2) == 0xA8 || at(2) == 0xA9 ||
       at(2) == 0xAF))
    return 3; // U+2000..U+200A, U+2028, U+2029, U+202F
  if (c == 0xE2 && at(1) == 0x81 && at(2) == 0x9F)
    return 3; // U+205F
  if (c == 0xE3 && at(1) == 0x80 && at(2) == 0x80)
    return 3; // U+3000
  return 0;
}

/// Python's str.rstrip() for ASCII whitespace and the spaces above.
std::string_view rightStrip(std::string_view text) {
  while (!text.empty()) {
    size_t cut = 0;
    for (size_t length = 1; length <= 3 && length <= text.size(); ++length)
      if (unicodeSpaceLength(text, text.size() - length) == length)
        cut = length;
    if (cut == 0)
      break;
    text.remove_suffix(cut);
  }
  return text;
}

} // namespace

// The passes work on bytes: every character the patterns name is ASCII,
// and a UTF-8 multi-byte character (never one of them) matches [^0-9]
// byte by byte exactly where Python matches it as one code point.
std::vector<std::string> tokenize13a(std::string_view line) {
  std::string text(line);
  replaceAll(text, "<skipped>", "");
  replaceAll(text, "-\n", "");
  replaceAll(text, "\n", " ");
  if (text.find('&') != std::string::npos) {
    replaceAll(text, "&quot;", "\"");
    replaceAll(text, "&amp;", "&");
    replaceAll(text, "&lt;", "<");
    replaceAll(text, "&gt;", ">");
  }
  text = " " + text + " ";
  text = substitute(
      text, [](const std::string &s, size_t i) -> size_t {
        return isIsolated13a(s[i]) ? 1 : 0;
      },
      [](std::string &out, const std::string &s, size_t i) {
        out += ' ';
        out += s[i];
        out += ' ';
      });
  text = substitute(
      text, [](const std::string &s, size_t i) -> size_t {
        return i + 1 < s.size() && !isDigit(s[i]) && isDotOrComma(s[i + 1])
                   ? 2
                   : 0;
      },
      [](std::string &out, const std::string &s, size_t i) {
        out += s[i];
        out += ' ';
        out += s[i + 1];
        out += ' ';
      });
  text = substitute(
      text, [](const std::string &s, size_t i) -> size_t {
        return i + 1 < s.size() && isDotOrComma(s[i]) && !isDigit(s[i + 1])
                   ? 2
                   : 0;
      },
      [](std::string &out, const std::string &s, size_t i) {
        out += ' ';
        out += s[i];
        out += ' ';
        out += s[i + 1];
      });
  text = substitute(
      text, [](const std::string &s, size_t i) -> size_t {
        return i + 1 < s.size() && isDigit(s[i]) && s[i + 1] == '-' ? 2 : 0;
      },
      [](std::string &out, const std::string &s, size_t i) {
        out += s[i];
        out += ' ';
        out += s[i + 1];
        out += ' ';
      });
  // Python's str.split(): runs of whitespace separate, none at the ends.
  std::vector<std::string> tokens;
  size_t start = 0, i = 0;
  while (i <= text.size()) {
    size_t space = i < text.size() ? unicodeSpaceLength(text, i) : 1;
    if (space == 0) {
      ++i;
      continue;
    }
    if (i > start)
      tokens.push_back(text.substr(start, i - start));
    i += space;
    start = i;
  }
  return tokens;
}

BleuScore sacreBleu(const std::vector<std::string> &hypotheses,
                    const std::vector<std::string> &references) {
  if (hypotheses.size() != references.size())
    throw std::invalid_argument(
        std::to_string(hypotheses.size()) + " hypotheses but " +
        std::to_string(references.size()) + " references");
  BleuAccumulator bleu;
  for (size_t i = 0; i < hypotheses.size(); ++i) {
    bleu.add(tokenize13a(rightStrip(hypotheses[i])),
             tokenize13a(rightStrip(references[i])));
  }
  return bleu.sacreBleuScore();
}

std::string formatBleu(const BleuScore &score) {
  char text[200];
  std::snprintf(text, sizeof(text),
                "BLEU = %.2f (%.1f/%.1f/%.1f/%.1f, BP %.3f, ratio %.3f, hyp "
                "%lld, ref %lld%s)",
                score.bleu, score.precisions[0], score.precisions[1],
                score.precisions[2], score.precisions[3], score.brevityPenalty,
                score.lengthRatio,
                static_cast<long long>(score.hypothesisLength),
                static_cast<long long>(score.referenceLength),
                score.order == kBleuMaxOrder
                    ? ""
                    : (", effective order " + std::to_string(score.order)).c_str());
  return text;
}

} // namespace txrt::driver
