// A block read down its columns packed row-major by register transposes, written to a CodeWriter
// (the emitter decides which dot operands qualify and where their elements lie:
// emitter_transposed_pack.cpp).
//
// In: the packed array's sizes, the tensor's pointer and the C offset of a tile's elements. Out: the
// loops that load `width` consecutive rows (k) of each of `width` columns as one vector each
// (vload<width> or vload_half<width>), transpose the width x width tile in registers
// (nt_transpose<width>, transpose_helper()) and store `width` rows of the packed array with
// vstore<width>; then the edges (the columns past the last whole tile of each row, and the rows past
// the last whole tile) element by element.
#pragma once

#include <functional>
#include <string>

#include "codegen/c/code_writer.h"
#include "codegen/dialect.h"

namespace nt::codegen {

// nt_transpose<w>(): w float<w> rows transposed in registers, w a power of two.
std::string transpose_helper(int w, const Dialect& dialect);

struct TransposedTiles {
  int width = 16;             // the tile's rows and columns: 16, or 8 for 32-byte vector registers
  std::string vload;          // "vload" (float32) or "vload_half" (float16)
  std::string pointer;        // the tensor's pointer
  std::string array;          // the packed array, `columns` wide
  std::string rows, columns;  // its sizes (C)
  // Names the loops declare: the tile's first row and column, its registers, an edge element's row
  // and column. The caller knows their bounds: 0 <= k0, ek < rows, 0 <= n0, en < columns.
  std::string k0, n0, registers, ek, en;
  // The offset (C) from `pointer` of element (k0, n0 + i) of the block.
  std::function<std::string(int i)> column_offset;
  // Writes element (ek, en) of the packed array.
  std::function<void()> edge;
};
void write_transposed_tiles(CodeWriter& out, const TransposedTiles& tiles);

}  // namespace nt::codegen
