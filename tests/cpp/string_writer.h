// A CodeWriter (codegen/c/code_writer.h) into a string, two spaces an indentation level: what the
// tests of statement-pattern generators read.
#pragma once

#include <string>

#include "codegen/c/code_writer.h"

namespace nt::testing {

class StringWriter : public codegen::CodeWriter {
 public:
  void emit_line(const std::string& line) override { text += std::string(2 * indent, ' ') + line + "\n"; }
  void emit_open(const std::string& head) override {
    emit_line(head + " {");
    ++indent;
  }
  void emit_close() override {
    --indent;
    emit_line("}");
  }
  void emit_else() override {
    --indent;
    emit_line("} else {");
    ++indent;
  }
  std::string text;
  int indent = 0;
};

}  // namespace nt::testing
