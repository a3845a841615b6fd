// ProgramLayout: how the programs of a kernel map onto OpenCL work-items.
//
// This is the one place that decides it; nothing else may assume it. Two
// layouts. Work-item: one program per work-item over a 1-D grid: work-item
// `g` runs the program whose index in the outermost shape (s0, ..., sn-1) has
// the digits `nt_pid_0 .. nt_pid_{n-1}` (row-major, the last digit fastest),
// and it walks every element of its blocks itself in loop nests. Work-group:
// one program per work-group of NT_WORK_ITEMS work-items (work_group_macros()).
// An element-wise kernel's nests give each work-item every NT_WORK_ITEMS-th
// element of their innermost dimension; any other kernel's nests walk the tile
// layout of their block shape (tile_layout()), and what work-items share goes
// through local memory (codegen/c/kernel_source.h).
//
// The grid is the outermost shape of the kernel's first tiled parameter
// (ir::grid_shape). A parameter whose outermost level has the grid's rank
// takes the digits (its shape must be the grid's, checked at launch); one of
// another rank (upstream allows e.g. (1, 1, 1) against (1, 1)) unravels the
// flat program id `nt_pid_flat` over its own shape.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "symbolic/expr.h"
#include "symbolic/simplify.h"

namespace nt::lower {

class ProgramLayout {
 public:
  explicit ProgramLayout(std::vector<Expr> outermost_shape);

  const std::vector<Expr>& outermost_shape() const { return shape_; }
  // The program-id digit of dimension `d` as a symbol (`nt_pid_<d>`).
  Expr program_index(size_t d) const;
  // The index of the current program in a parameter's outermost level of
  // `shape`: the digits when `shape` has the grid's rank, else the flat
  // program id unravelled row-major over `shape`.
  std::vector<Expr> program_indices(const std::vector<Expr>& shape) const;
  // Upstream's rule for a parameter whose outermost shape is not the grid's: the flat
  // program id unravelled row-major over its own `shape`, whatever its rank. Its leading
  // index passes its size on programs past the parameter's count: lower_access masks those.
  std::vector<Expr> own_program_indices(const std::vector<Expr>& shape) const;
  // The flat program id (`nt_pid_flat`), 0 <= it <= the grid's count - 1.
  static Expr flat_program_id();
  // The program after this one in the flat order (nt_pid_flat + 1), as the value of each
  // program symbol (`nt_pid_flat` and the digits) in terms of the current flat id. On a
  // CPU device the work-item form runs consecutive programs on one thread (PoCL hands its
  // threads runs of consecutive work-groups), so this is the program whose data a program
  // may ask the cache for before it ends.
  std::vector<std::pair<std::string, Expr>> next_program() const;
  // What is known about the digits: 0 <= nt_pid_d <= s_d - 1.
  void add_bounds(BoundsEnv& env) const;
  // C statements declaring the digits (`print` turns an Expr into C); `work_group`:
  // the program is the work-group's (work_group_macros()), not the work-item's, whose id
  // the target spells `global_id`.
  std::vector<std::string> prologue(const std::vector<std::string>& printed_shape, bool work_group,
                                    std::string_view global_id) const;
  // The macros of a source that may run a program on a work-group: NT_WORK_ITEMS (given
  // at build, 1 if not), NT_PROGRAM (the flat program id) and NT_LANE (the work-item's
  // index in its work-group, 0 on one work-item). Such a source walks the innermost
  // dimension of every nest from NT_LANE in steps of NT_WORK_ITEMS: consecutive work-items
  // take consecutive elements (consecutive addresses where that dimension has unit stride).
  // The target spells the ids `group_id`, `local_id` and `global_id` (codegen/dialect.h).
  static std::string work_group_macros(std::string_view group_id, std::string_view local_id,
                                       std::string_view global_id);
  // Helpers of the tile layouts (NT_MIN, NT_MAX, NT_POW2CEIL) and NT_BARRIER(), for a source
  // built with NT_WORK_ITEMS > 1; the target spells the barrier `barrier`, and `if_unrolls` opens
  // what a compiler that unrolls loops is given.
  static std::string tile_macros(std::string_view barrier, std::string_view if_unrolls);
  // The tile layout `id` of a block of `rows` x `columns` elements (C constant expressions;
  // a block of rank n has the product of its first n - 1 sizes as rows): the work-group's
  // NT_WORK_ITEMS work-items form a grid of NT_TY<id> rows by NT_TX<id> columns; work-item
  // NT_LANE is (ty, tx) = (NT_VLANE<id> / NT_TX, NT_VLANE<id> % NT_TX) and holds the
  // NT_R<id> x NT_C<id> elements (NT_ROW<id>(ty, r), NT_COL<id>(tx, c)) in its slots
  // r * NT_C + c. Every block of one shape has one layout, so a work-item holds the same
  // elements of every value of that shape; the work-items of a row are those of one ty.
  // NT_FULL<id>: every work-item's every slot is an element of the block (nests test nothing).
  //
  // The cyclic layout: NT_VLANE = NT_LANE, element (ty + NT_TY r, tx + NT_TX c), NT_TX a
  // power of two: consecutive work-items hold consecutive elements of a row.
  //
  // `mma`: the shape is a dot's result whose operands tensor cores can multiply. Where the
  // source is built with NT_MMA_LAYOUT and the shape divides evenly (NT_MMA<id>), the layout
  // is instead that of the accumulators of PTX's mma.m16n8k16: the work-group's warps form
  // a NT_WM<id> x NT_WN<id> grid, and lane (g, t) = (lane / 4, lane % 4) of warp (wm, wn)
  // holds, of each 16 x 8 tile (i, j) of its warp's, rows 16 (wm + NT_WM i) + g and + 8 and
  // columns 8 (wn + NT_WN j) + 2 t and + 1: ty = 8 wm + g, tx = 4 wn + t, slot row
  // r = 2 i + (the row's half), slot column c = 2 j + (the column's parity).
  // `warpgroups` (CUDA C): where the source is built with NT_WGMMA (sm_90a) and the rows divide
  // into the warps' 16-row tiles and the columns into 16s, NT_WGMMA<id> holds and the grid is
  // NT_WM = the warps by NT_WN = 1, the accumulators of wgmma's m64nN (codegen/c/wgmma_ptx.h).
  // `row_warps`: where the rows divide into the warps' 16-row tiles, NT_WM = the warps and NT_WN = 1
  // too, so that each warp holds whole rows: shapes whose values a dot reads from registers as
  // its a fragments, and that dot's result (flash attention's p and output: the rows of both
  // layouts are then the same work-items'). The source defines NT_HELD_A (0 with -DNT_NO_HELD_A).
  //
  // A row family: `row_warps` layouts of blocks with the same rows (flash attention's scores and
  // output), whose rows lie alike in every configuration: its members take the NT_WM, NT_WN and
  // NT_TX of its head (the member whose `family.head` is its own id), and the head is an mma layout
  // only where the other members' columns (`other_columns`, C) divide into its warps' tiles too. Then
  // a work-item holds the same rows, in the same row slots, of every member's blocks.
  struct RowFamily {
    int head = 0;                            // the head's layout id
    std::vector<std::string> other_columns;  // the head's: the other members' columns
  };
  static std::string tile_layout(int id, const std::string& rows, const std::string& columns,
                                 bool mma = false, bool warpgroups = false, bool row_warps = false,
                                 const RowFamily* family = nullptr);
  // The tile layout `id` of a row vector held as the rows of a row family's head `parent` (Triton's
  // slice layouts): a 1 x rows block whose work-items each hold, in column slot c, the row that row
  // slot c of `parent` holds. The work-items of a parent's row (NT_TX of them) hold the same
  // elements: what reads the vector at a row of a member's block reads its own registers, and what
  // would fold its elements across work-items must not walk this layout (it would count each NT_TX
  // times).
  static std::string slice_layout(int id, int parent);
  // The global and local work sizes for `num_programs` programs of `work_items` each.
  static size_t global_size(size_t num_programs, size_t work_items = 1) { return num_programs * work_items; }
  static size_t local_size(size_t work_items = 1) { return work_items; }

 private:
  std::vector<Expr> shape_;
};

}  // namespace nt::lower
