// A unit-stride innermost loop as strips of 16 elements, written to a CodeWriter (the emitter
// decides which loops, what each strip prefetches and where a streamed store's elements go:
// emitter_prefetch.cpp).
//
// Out:
//
//   for (long eo = 0; eo < n; eo += 16) {
//     <before(): the next program's prefetches, a streamed store's buffer>
//     <hint(): a vectoriser's> for (long e = eo; e < min(eo + 16L, (long)(n)); ++e) <body()>
//     <streamed: if (eo + 16 <= n) one non-temporal vector store of the buffer; else its elements>
//   }
//
// and, where the build takes n as a kernel argument (NT_RUNTIME_META: a block size), the whole
// strips first, each a loop of 16 stored whole, then the last strip, if any, stored by element.
#pragma once

#include <functional>
#include <string>

#include "codegen/c/code_writer.h"

namespace nt::codegen {

struct Strips {
  std::string strip, index;  // the strip's first element and the element (loop variables)
  std::string extent;        // the loop's elements (C)
  std::function<void()> before, body;
  std::function<void()> hint;  // what must come just before a strip's loop (a loop pragma), or none
  // A streamed store: `buffer()` (declared by `before()`), 16 elements of `type`, goes to memory at
  // `element_at(lane)`, the address (C) of the strip's first element (`lane` empty) or of its
  // element `lane`. `lane()` names the variable of the last strip's elements, asked for once the
  // body is written.
  bool streamed = false;
  std::string type, global_pointer;
  std::function<std::string()> buffer, lane;
  std::function<std::string(const std::string& lane)> element_at;
};
void write_strips(CodeWriter& out, const Strips& strips);

}  // namespace nt::codegen
