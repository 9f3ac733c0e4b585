//===- InputLines.h - the texts of translate, generate and predict -*- C++
//-*-===//
//
// The inference commands take their texts from the command line or, with
// none there, one a line from stdin. Lines from stdin are read like a text
// file (TextCorpus.h, TabbedLines.h): a UTF-8 byte order mark at the start
// and the '\r' of a CRLF line end are dropped, and every text must be UTF-8.
// Each text keeps where it came from ("sentence 2", "<stdin>:7") for errors.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_INPUTLINES_H
#define TXRT_DRIVER_INPUTLINES_H

#include <istream>
#include <string>
#include <vector>

namespace txrt::driver {

struct InputLines {
  std::vector<std::string> lines;
  std::vector<std::string> where; ///< "LABEL N" or "<stdin>:N", per line
};

/// `arguments` when there are any (each named "`label` N"), else the lines
/// of `in`. Throws InputError naming the text on invalid UTF-8 ("<stdin>:3:
/// invalid UTF-8 at byte 5 of the line"), and when `in` cannot be read
/// (stdin redirected from a directory).
InputLines readInputLines(const std::vector<std::string> &arguments,
                          const std::string &label, std::istream &in);

} // namespace txrt::driver

#endif // TXRT_DRIVER_INPUTLINES_H
