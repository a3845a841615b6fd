#include "codegen/c/strips.h"

namespace nt::codegen {

void write_strips(CodeWriter& out, const Strips& t) {
  const std::string &eo = t.strip, &v = t.index, &extent = t.extent;
  out.emit_open("for (long " + eo + " = 0; " + eo + " < " + extent + "; " + eo + " += 16)");
  t.before();
  out.emit_open("for (long " + v + " = " + eo + "; " + v + " < min(" + eo + " + 16L, (long)(" + extent +
                ")); ++" + v + ")");
  t.body();
  out.emit_close();
  if (t.streamed) {
    const std::string buffer = t.buffer();
    // A whole strip (64 bytes from a 64-byte boundary: the emitter's stream_test()) as one vector
    // store around the caches; the last strip of a row shorter than 16 element by element.
    out.emit_open("if (" + eo + " + 16 <= " + extent + ")");
    out.emit_line("__builtin_nontemporal_store(vload16(0, " + buffer + "), (" + t.global_pointer + t.type +
                  "16*)" + t.element_at("") + ");");
    out.emit_else();
    const std::string lane = t.lane();
    out.emit_open("for (long " + lane + " = 0; " + eo + " + " + lane + " < " + extent + "; ++" + lane + ")");
    out.emit_line("*" + t.element_at(lane) + " = " + buffer + "[" + lane + "];");
    out.emit_close();
    out.emit_close();
  }
  out.emit_close();
}

}  // namespace nt::codegen
