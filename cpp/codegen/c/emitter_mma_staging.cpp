// Tensor-core dot operands staged in their own type (dialects with mma_async_staging: CUDA C).
//
// In: a float16, bfloat16 or float32 dot operand that pitched_operand()
// (emitter_work_group_dot.cpp) or a pipelined k loop (emitter_pipeline.cpp) stages in shared
// memory. Out: the C that fills its array with the operand's own values (16-bit ones as their
// bits), rows `pitch` elements apart, read back by ldmatrix or as TF32 fragments (or, off tensor
// cores, as floats).
//
// A block loaded whole from a tensor, where the block is in bounds, its rows are contiguous in
// memory and start 16 bytes apart from a 16-byte-aligned element, is copied 16 bytes (8 16-bit
// elements, 4 floats) a thread at a time by cp.async, with no trip through registers; so is a
// partial one whose conditions test its rows alone, its masked chunks zeros (stage_block()).
// Everything else (other partial blocks, strided rows, computed operands) is converted element by
// element, rounded to nearest even. The copies are identical in value: a loaded float16 held as
// float converts back to its own bits.
#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <string>

#include "codegen/c/emitter.h"
#include "symbolic/substitute.h"

namespace nt::codegen {

using namespace nt::ir;

// The degree of `e` as a polynomial in the symbols `names` together: 0 (free of them), 1
// (affine in them), or 2 (anything else: a product of two of them, or one under a division,
// a modulo, a min or a comparison).
int degree_in(const Expr& e, const std::set<std::string>& names) {
  switch (e->kind) {
    case ExprKind::Var:
      return names.count(e->name) ? 1 : 0;
    case ExprKind::Int:
    case ExprKind::Float:
    case ExprKind::Bool:
      return 0;
    default:
      break;
  }
  int most = 0, sum = 0;
  for (const Expr& o : e->operands) {
    const int d = degree_in(o, names);
    most = std::max(most, d);
    sum += d;
  }
  if (most == 0) return 0;
  if (e->kind == ExprKind::Unary && e->unary_op == UnaryOp::Neg) return most;
  if (e->kind == ExprKind::Binary) {
    switch (e->binary_op) {
      case BinaryOp::Add:
      case BinaryOp::Sub:
        return most;
      case BinaryOp::Mul:
        return std::min(sum, 2);
      default:
        break;
    }
  }
  return 2;
}

std::string staged_type(DType dtype) {
  if (dtype == DType::float32) return "float";
  return dtype == DType::float16 ? "half" : "ushort";
}

int staged_size(DType dtype) { return dtype == DType::float32 ? 4 : 2; }

std::string staged_store(DType dtype, const std::string& array, const std::string& at,
                         const std::string& value) {
  if (dtype == DType::float32) return array + "[" + at + "] = (float)(" + value + ");";
  if (dtype == DType::float16)
    return "NT_STORE_HALF_LOCAL((float)(" + value + "), " + at + ", " + array + ");";
  return array + "[" + at + "] = nt_float_to_bf16((float)(" + value + "));";
}

std::string staged_load(DType dtype, const std::string& array, const std::string& at) {
  if (dtype == DType::float32) return array + "[" + at + "]";
  if (dtype == DType::float16) return "vload_half(" + at + ", " + array + ")";
  return "nt_bf16_to_float(" + array + "[" + at + "])";
}

namespace {

// May `p`'s partial blocks be copied as whole ones whose masked chunks are zeros? Where none of the
// access's conditions tests the column `j` (a chunk is then in or out whole) and its other value is
// zero (cp.async's fill).
bool masked_rows_copy(const Param& p, const lower::TensorAccess& a, const Expr& i, const Expr& j) {
  for (const Expr& condition : a.conditions_at({i, j}, false))
    for (const Expr& v : collect_vars(condition))
      if (v->name == j->name) return false;
  const auto& other = p.arranged->other();
  if (!other) return true;
  const ExprNode& value = **other;
  if (value.kind == ExprKind::Int) return value.int_value == 0;
  return value.kind == ExprKind::Float && value.float_value == 0 && !std::signbit(value.float_value);
}

}  // namespace

std::string Emitter::unit_rows_test(const lower::TensorAccess& a, const std::vector<Expr>& shape,
                                    const std::string& ptr, int rows_by, int align) {
  // Only where the element offset is affine in the block's row i and column j are its steps along
  // either the same everywhere, read at (0, 0).
  const Expr i = index_variable("nt_si", shape[0]), j = index_variable("nt_sj", shape[1]);
  if (degree_in(a.offset_at({i, j}), {i->name, j->name}) > 1) return "";
  auto offset = [&](int64_t row, int64_t column) {
    return "(" + c(simplify(a.offset_at({Expr(row), Expr(column)}), env_)) + ")";
  };
  const std::string origin = offset(0, 0);
  return "(" + offset(0, 1) + " - " + origin + ") == 1 && (" + offset(1, 0) + " - " + origin + ") % " +
         std::to_string(rows_by) + " == 0 && ((ulong)(" + ptr + " + " + origin + ") & " +
         std::to_string(align - 1) + ") == 0";
}

std::string Emitter::async_rows_test(const Value& load, const lower::TensorAccess& a,
                                     const std::string& pitch) {
  const std::vector<Expr>& shape = load->type.shape;
  if (load->kind != ValueKind::Load || shape.size() != 2 ||
      k_.params[load->param].dtype != load->type.dtype || a.never || !a.per_element.empty())
    return "";
  // Rows are copied as runs of 16 bytes (`chunk` elements a copy).
  const int chunk = 16 / staged_size(load->type.dtype);
  const std::string rows = unit_rows_test(a, shape, "nt_p" + std::to_string(load->param), chunk, 16);
  if (rows.empty()) return "";
  const std::string n = std::to_string(chunk);
  // Where the launch says that the tensor's rows are aligned (aligned_rows_macro()), each offset is
  // its last coordinate modulo `chunk`: the test is then its column's, which block sizes known at
  // build time make a constant, and the element-by-element path beside the copies dead code.
  std::string aligned;
  if (!k_.params[load->param].arranged->source_ref().jagged_dim() && !a.coordinates.empty()) {
    const std::string macro = aligned_rows_macro(load->param);
    if (std::find(launch_macros_.begin(), launch_macros_.end(), macro) == launch_macros_.end())
      launch_macros_.push_back(macro);
    const size_t last = a.coordinates.size() - 1;
    auto column = [&](int64_t row, int64_t col) {
      return "(" + c(simplify(a.coordinate_at(last, {Expr(row), Expr(col)}), env_)) + ")";
    };
    auto offset = [&](int64_t row, int64_t col) {
      return "(" + c(simplify(a.offset_at({Expr(row), Expr(col)}), env_)) + ")";
    };
    aligned = "(" + offset(0, 1) + " - " + offset(0, 0) + ") == 1 && (" + column(1, 0) + " - " +
              column(0, 0) + ") % " + n + " == 0 && " + column(0, 0) + " % " + n + " == 0";
  }
  const std::string either =
      aligned.empty() ? rows : "(" + aligned_rows_macro(load->param) + " ? " + aligned + " : " + rows + ")";
  return either + " && (" + c(simplify(shape[1], env_)) + ") % " + n + " == 0 && (" + pitch + ") % " + n +
         " == 0";
}

void Emitter::emit_async_rows(const Value& load, const lower::TensorAccess& a, const std::string& array,
                              const StagedLayout& layout, bool masked) {
  const std::vector<Expr>& shape = load->type.shape;
  const std::string rows = c(simplify(shape[0], env_)), columns = c(simplify(shape[1], env_));
  const Expr i = index_variable("nt_si", shape[0]), j = index_variable("nt_sj", shape[1]);
  const std::string chunk = fresh("nt_chunk"), width = std::to_string(16 / staged_size(load->type.dtype));
  loaded_params_.insert(load->param);
  // A work-item's copies counted from 0 to a bound the compiler knows (a block of known sizes): the
  // loop unrolls whole, and each copy's offsets, the same at every step of a k loop but for the
  // step's own term, are computed once, out of that loop. Counted from NT_LANE, its trip count
  // was the work-item's own, and the compiler wrote a general loop that recomputed every offset.
  const std::string chunks = "((" + rows + ") * ((" + columns + ") / " + width + "))";
  open_counted_copies(chunks, chunk);
  // As in stage_block(): a work-item's column is the same at every copy where the work-group is
  // whole rows of chunks, so that only the row moves its addresses.
  const std::string per_row = "((" + columns + ") / " + width + ")";
  line_("const nt_index " + i->name + " = " + chunk + " / " + per_row + ", " + j->name +
        " = (NT_WORK_ITEMS % " + per_row + " == 0 ? NT_LANE : " + chunk + ") % " + per_row + " * " + width +
        ";");
  const std::string to = array + " + " + layout.at(i->name, j->name),
                    from = "nt_p" + std::to_string(load->param) + " + (" +
                           c(simplify(a.offset_at({i, j}), env_)) + ")";
  if (masked) {
    const bool was_fast = fast_;
    fast_ = false;  // every condition, the hoistable ones too
    const std::string mask = mask_of(a, {i, j});
    fast_ = was_fast;
    line_("nt_cp_async16_zfill(" + to + ", " + from + ", " + (mask.empty() ? "1" : mask) + ");");
  } else {
    line_("nt_cp_async16(" + to + ", " + from + ");");
  }
  close();
  close();
}

void Emitter::open_counted_copies(const std::string& total, const std::string& copy) {
  const std::string step = fresh("nt_step");
  line_("NT_UNROLL");
  open("for (int " + step + " = 0; " + step + " < (" + total + " + NT_WORK_ITEMS - 1) / NT_WORK_ITEMS; ++" +
       step + ")");
  line_("const nt_index " + copy + " = NT_LANE + " + step + " * NT_WORK_ITEMS;");
  open("if (" + total + " % NT_WORK_ITEMS == 0 || " + copy + " < " + total + ")");
}

void Emitter::copy_staged_rows(const Value& v, const std::string& array, const StagedLayout& layout,
                               const std::function<void(const std::vector<Expr>&)>& copy) {
  // Inside a pipelined k loop (staged_operands_), a copy waited for here would wait for the groups
  // loading later iterations too: element by element there.
  const std::string test = v->kind == ValueKind::Load && staged_operands_.empty()
                               ? async_rows_test(v, access_of(v), layout.pitch)
                               : "";
  if (test.empty()) {
    loops(v->type.shape, copy);
    return;
  }
  line_("#ifdef NT_MMA_SYNC");
  open("if (" + test + ")");
  emit_async_rows(v, access_of(v), array, layout);
  line_("NT_CP_ASYNC_COMMIT();");
  line_("NT_CP_ASYNC_WAIT(0);");
  close("} else");
  line_("#endif");
  open("");
  loops(v->type.shape, copy);
  close();
}

void Emitter::stage_block(const Value& load, const lower::TensorAccess& a, const std::string& array,
                          const StagedLayout& layout) {
  const std::vector<Expr>& shape = load->type.shape;
  const std::string rows_test = async_rows_test(load, a, layout.pitch);
  // Where the block's conditions test its rows alone and its masked elements read as zeros, a
  // partial block is copied as a whole one, its chunks past the tensor filled with zeros (cp.async's
  // source size 0), as Triton copies masked loads: one path for every block. Elsewhere only whole
  // blocks are, and partial ones element by element: beside that path, such copies (never run in
  // flash attention whose blocks divide the sequence) cost its whole blocks 3-25% of their time
  // on an H200 (docs/performance.md).
  const bool masked =
      !rows_test.empty() && masked_rows_copy(k_.params[load->param], a, index_variable("nt_si", shape[0]),
                                             index_variable("nt_sj", shape[1]));
  std::string test = rows_test;
  if (!masked) {  // whole blocks only: their corners in bounds
    for (const Expr& t : a.block_test) {
      const std::string corner = c(t);
      if (corner == "0") test.clear();
      if (!test.empty() && corner != "1") test = "(" + corner + ") && " + test;
    }
  }
  if (!test.empty()) {
    line_("#ifdef NT_MMA_SYNC");
    open("if (" + test + ")");
    emit_async_rows(load, a, array, layout, masked);
    close("} else");
    line_("#endif");
  }
  // Element by element, every condition tested: a partial block, strided rows, a gather.
  open("");
  const Param& p = k_.params[load->param];
  loaded_params_.insert(load->param);
  const std::string rows = c(simplify(shape[0], env_)), columns = c(simplify(shape[1], env_));
  const Expr i = index_variable("nt_si", shape[0]), j = index_variable("nt_sj", shape[1]);
  // A gathered block of 16-bit values (offsets that divide its row or column index: an implicit
  // GEMM's operands) is copied in runs of kRun columns of a row, each run one 16-byte store. A
  // row's pitch and wgmma's atoms (which swizzle 16-byte chunks whole) keep such runs contiguous
  // and aligned where the width and the pitch are multiples of kRun: the run is kRun there, else 1
  // (an element a copy), decided when the source is built. Its tables' entries
  // (emitter_index_tables.cpp) are read once a run for its row, and once a step for its columns
  // where the work-group is whole rows of runs, not once an element.
  constexpr int kRun = 8;
  const std::optional<int64_t> width = simplify(shape[1], env_).as_int();
  const bool runs = p.dtype == load->type.dtype &&
                    (p.dtype == DType::float16 || p.dtype == DType::bfloat16) &&
                    (!width || *width % kRun == 0) && degree_in(a.offset_at({i, j}), {i->name, j->name}) > 1;
  const std::string longest = std::to_string(kRun), run = runs ? fresh("nt_run") : "1";
  if (runs)
    line_("const int " + run + " = (" + columns + ") % " + longest + " == 0 && (" + layout.pitch + ") % " +
          longest + " == 0 ? " + longest + " : 1;");
  const std::string per_row = runs ? "((" + columns + ") / " + run + ")" : "(" + columns + ")";
  const std::string whole_rows = "NT_WORK_ITEMS % " + per_row + " == 0";
  const std::string place = fresh("nt_place");
  std::vector<IndexTables::OnceRead> fixed = {{}, {whole_rows, "NT_LANE % " + per_row}};
  if (runs) {
    fixed[0].per_copy = true;
    fixed[1] = {whole_rows, "NT_LANE % " + per_row + " * " + run, kRun, place, run};
  }
  with_group_tables(shape, {i->name, j->name}, fixed, [&] {
    // Runs counted from 0 to a bound known at build time and unrolled, as emit_async_rows()'s
    // copies: the compiler may then issue a work-item's loads together, ahead of their stores.
    // Elements one at a time keep a loop from NT_LANE: unrolled, they took flash attention's
    // partial-block copies' registers from its dots (128 x 64 blocks, 4 warps: 1.925 to 2.136 ms).
    const std::string total = "((" + rows + ") * " + per_row + ")", copy = fresh("nt_copy");
    if (runs)
      open_counted_copies(total, copy);
    else
      open("for (nt_index " + copy + " = NT_LANE; " + copy + " < " + total + "; " + copy +
           " += NT_WORK_ITEMS)");
    // Where the work-group is whole rows (of runs), a work-item's column is the same at every copy:
    // written as such, what depends on the column alone is computed once per copy, out of the loop.
    const std::string first = runs ? fresh("nt_first") : j->name;
    line_("const nt_index " + i->name + " = " + copy + " / " + per_row + ", " + first + " = (" + whole_rows +
          " ? NT_LANE : " + copy + ") % " + per_row + (runs ? " * " + run : "") + ";");
    auto element = [&] {
      const bool was_fast = fast_;
      fast_ = false;
      const std::string mask = mask_of(a, {i, j});
      fast_ = was_fast;
      const std::string ptr = "nt_p" + std::to_string(load->param),
                        offset = c(simplify(a.offset_at({i, j}), env_));
      // A run holds its elements' own bits (no trip through float); masked-off ones the other value's.
      const std::string other =
          !runs ? other_of(p)
                : (p.dtype == DType::float16 ? "nt_half_bits_rte((float)(" : "nt_float_to_bf16((float)(") +
                      other_of(p) + "))";
      std::string value = mask == "0" ? other
                          : runs      ? "((const ushort*)" + ptr + ")[" + offset + "]"
                                      : load_element(p, ptr, offset);
      if (!mask.empty() && mask != "0") value = "((" + mask + ") ? " + value + " : " + other + ")";
      return runs ? value : staged_store(load->type.dtype, array, layout.at(i->name, j->name), value);
    };
    if (!runs) {
      line_(element());
    } else {
      const std::string bits = fresh("nt_bits"), packed = fresh("nt_packed");
      // The run's elements, after the reads of its row's entries that they ask for.
      written_after(
          [&] {
            line_("ushort " + bits + "[" + longest + "];");
            line_("NT_UNROLL");
            open("for (int " + place + " = 0; " + place + " < " + run + "; ++" + place + ")");
            line_("const nt_index " + j->name + " = " + first + " + " + place + ";");
            line_(bits + "[" + place + "] = " + element() + ";");
            close();
            const std::string at = array + " + " + layout.at(i->name, first);
            open("if (" + run + " == " + longest + ")");  // known when the source is built
            line_("uint4 " + packed + ";");
            const char* lanes[] = {"x", "y", "z", "w"};
            for (int n = 0; n < kRun / 2; ++n)
              line_(packed + "." + lanes[n] + " = (uint)" + bits + "[" + std::to_string(2 * n) +
                    "] | (uint)" + bits + "[" + std::to_string(2 * n + 1) + "] << 16;");
            line_("*(uint4*)(" + at + ") = " + packed + ";");
            close("} else {");
            ++indent_;
            line_("*(ushort*)(" + at + ") = " + bits + "[0];");
            close();
          },
          [&] {
            std::string text;
            for (const std::string& read : tables_.take_copy_reads())
              text += std::string(2 * indent_, ' ') + read + "\n";
            return text;
          });
    }
    close();
    if (runs) close();
  });
  close();
}

}  // namespace nt::codegen
