#include "codegen/c/strips.h"

namespace nt::codegen {

void write_strips(CodeWriter& out, const Strips& t) {
  const std::string &eo = t.strip, &v = t.index, &extent = t.extent;
  std::string lane;  // the last strip's element variable, named once (Strips::lane)
  // Strips from `from` to `to`, each of `bound` elements (C, in eo), stored whole or element by
  // element, or either as the strip turns out.
  enum class Store { whole, by_element, either };
  auto loop = [&](const std::string& from, const std::string& to, const std::string& bound, Store store) {
    out.emit_open("for (long " + eo + " = " + from + "; " + eo + " < " + to + "; " + eo + " += 16)");
    t.before();
    if (t.hint) t.hint();
    out.emit_open("for (long " + v + " = " + eo + "; " + v + " < " + bound + "; ++" + v + ")");
    t.body();
    out.emit_close();
    if (t.streamed) {
      const std::string buffer = t.buffer();
      auto whole = [&] {  // 64 bytes from a 64-byte boundary (the emitter's stream_test()), around the caches
        out.emit_line("__builtin_nontemporal_store(vload16(0, " + buffer + "), (" + t.global_pointer +
                      t.type + "16*)" + t.element_at("") + ");");
      };
      auto by_element = [&] {  // the last strip of a row shorter than 16
        if (lane.empty()) lane = t.lane();
        out.emit_open("for (long " + lane + " = 0; " + eo + " + " + lane + " < " + extent + "; ++" + lane +
                      ")");
        out.emit_line("*" + t.element_at(lane) + " = " + buffer + "[" + lane + "];");
        out.emit_close();
      };
      if (store == Store::whole) {
        whole();
      } else if (store == Store::by_element) {
        by_element();
      } else {
        out.emit_open("if (" + eo + " + 16 <= " + extent + ")");
        whole();
        out.emit_else();
        by_element();
        out.emit_close();
      }
    }
    out.emit_close();
  };
  // Where the extent is a kernel argument (a block size in the form that takes them so,
  // KernelSource::runtime_meta), the whole strips have a loop of their own, each strip a loop of 16:
  // a bound of min() with a value known only at run time leaves a strip unvectorised, and a test
  // in each strip costs the loop registers.
  const std::string whole_strips = "(long)(" + extent + ") / 16 * 16";
  out.emit_line("#ifdef NT_RUNTIME_META");
  loop("0", whole_strips, eo + " + 16L", Store::whole);
  loop(whole_strips, extent, "(long)(" + extent + ")", Store::by_element);
  out.emit_line("#else");
  loop("0", extent, "min(" + eo + " + 16L, (long)(" + extent + "))", Store::either);
  out.emit_line("#endif");
}

}  // namespace nt::codegen
