// What a piece of the code generator that only writes statements needs: lines, and blocks that
// open and close with their indentation. The emitter is one (through EmitContext); a test can
// give a string. Generators of fixed statement patterns take a CodeWriter, not the emitter, so
// that they can be read and tested alone (wgmma_ptx.h's write_wgmma_steps()).
#pragma once

#include <string>

namespace nt::codegen {

class CodeWriter {
 public:
  virtual ~CodeWriter() = default;
  virtual void emit_line(const std::string& line) = 0;
  virtual void emit_open(const std::string& head) = 0;  // `head {`, indented after
  virtual void emit_close() = 0;                        // `}`
  virtual void emit_else() = 0;                         // `} else {`, indented after
};

}  // namespace nt::codegen
