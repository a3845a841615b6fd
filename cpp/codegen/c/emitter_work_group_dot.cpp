// Dots over a work-group (Mode::WorkGroup): the operands staged in local memory, the result
// accumulated in the tile layout of its shape, on tensor cores where the device has them.
//
// In: a Dot node whose result goes to `result` (a distributed array in the result's tile
// layout, or a shared one). Out: OpenCL C that every work-item of the work-group runs.
//
// Two ways to multiply, chosen when the source is built:
//   - everywhere: per k, each work-item reads its rows of a and columns of b and fuses
//     NT_R x NT_C multiply-adds into its slots;
//   - NT_MMA_SYNC (a source for NVIDIA GPUs of compute capability 8.0 or later, where the
//     runtime found that inline PTX builds: tensor_cores() in driver/compiled_kernel.h) and the
//     result's layout is the mma one (lower/program_layout.h): float16 and bfloat16 operands go
//     16 steps of k at a time through PTX's mma.sync.m16n8k16 with float accumulators, each warp
//     loading its operand fragments from local memory. Both sum exact products in float, in
//     different orders; the mma path rounds its operands to 16 bits (computed float16 values are
//     held unrounded in float elsewhere). float32 operands of dots that ask for TF32
//     (DotPrecision, Triton's input_precision) go 8 steps of k at a time through
//     mma.sync.m16n8k8 on TF32 values (rounded to nearest, ties away), or, for "tf32x3", three
//     of them: high parts times high, high times low, low times high.
// Dialects with mma_async_staging (CUDA C) stage such operands in their own type instead of
// floats (emitter_mma_staging.cpp: 16-bit ones in half the shared memory; copied by cp.async
// where whole rows are contiguous) and load 16-bit fragments with ldmatrix, from rows `pitch`
// apart or from wgmma's swizzled atoms (StagedLayout::at()). A third way, for the dots of
// wgmma shapes on Hopper: write_wgmma_steps() (wgmma_ptx.h).
#include <functional>
#include <string>

#include "codegen/c/emitter.h"
#include "codegen/c/mma_ptx.h"
#include "codegen/c/mma_steps.h"
#include "codegen/c/wgmma_ptx.h"

namespace nt::codegen {

using namespace nt::ir;

namespace {

// Local-memory row padding of the operands of a tensor-core dot, in elements: with rows of a
// 8 floats (mod 32) apart, the eight groups of a warp read pairs of k from distinct banks; with
// rows of b 4 apart, the four threads of a group read distinct banks. Staged as 16-bit values,
// rows are an odd number of 16 bytes apart whenever the block's are a multiple of 32: the eight
// rows an ldmatrix reads at once lie in distinct banks. TF32 fragments read one float per lane:
// a's at g pitch + t (rows 4 banks apart), b's at t pitch + g (rows 8 apart).
constexpr int kPadA = 8;
constexpr int kPadB = 4;
constexpr int kPad16 = 8;
constexpr int kPadTf32A = 4;
constexpr int kPadTf32B = 8;

bool is_tf32(const std::string& type) { return type == "tf32" || type == "tf32x3"; }

}  // namespace

std::string mma_type(const Value& dot) {
  DType a = dot->operands[0]->type.dtype, b = dot->operands[1]->type.dtype;
  if (a != b) return "";
  if (a == DType::float16) return "f16";
  if (a == DType::bfloat16) return "bf16";
  if (a == DType::float32 && dot->op == static_cast<int>(DotPrecision::Tf32)) return "tf32";
  if (a == DType::float32 && dot->op == static_cast<int>(DotPrecision::Tf32x3)) return "tf32x3";
  return "";
}

Value Emitter::staged_value(const Value& dot, int which) {
  const Value& o = dot->operands[which];
  const std::string mma = mma_type(dot);
  if (which == 1 && d_.mma_async_staging && o->kind == ValueKind::Trans && !mma.empty() && !is_tf32(mma))
    return o->operands[0];
  return o;
}

namespace {

// C: where tile layout n is that of wgmma's accumulators (built for it, NT_WARPGROUP_MMA): an mma
// layout of whole warpgroups whose warps each hold 16 rows of every 16 NT_WM (NT_WN 1), in columns
// of 16.
std::string warpgroup_result(const std::string& n) {
  return "NT_WARPGROUP_MMA && NT_MMA" + n + " && NT_WORK_ITEMS % 128 == 0 && NT_WM" + n +
         " == NT_WORK_ITEMS / 32 && NT_WN" + n + " == 1 && NT_COLS" + n + " % 16 == 0";
}

}  // namespace

StagedLayout Emitter::operand_layout(const Value& dot, int which, int& pad) {
  const std::string mma = mma_type(dot);
  if (is_tf32(mma))
    pad = which == 0 ? kPadTf32A : kPadTf32B;
  else
    pad = d_.mma_async_staging ? kPad16 : (which == 0 ? kPadA : kPadB);
  const std::string n = std::to_string(tile_layout(dot->type.shape));
  const std::vector<Expr>& shape = staged_value(dot, which)->type.shape;
  StagedLayout layout;
  layout.rows = c(simplify(shape[0], env_));
  layout.columns = c(simplify(shape[1], env_));
  std::string padded = "NT_MMA" + n;
  // 16-bit operands on Hopper's warpgroup MMAs: unpadded, in swizzled atoms (write_wgmma_steps()).
  if (wgmma_shapes_.count(shape_key(dot->type.shape)) && (mma == "f16" || mma == "bf16")) {
    layout.swizzled =
        "NT_WGMMA" + n + " && (" + c(simplify(dot->operands[0]->type.shape[1], env_)) + ") % 16 == 0";
    padded += " && !(" + layout.swizzled + ")";
  } else if ((mma == "f16" || mma == "bf16") && register_operand(dot) &&
             row_warp_shapes_.count(shape_key(dot->operands[0]->type.shape))) {
    // A dot whose a registers may hold (flash attention's q k and p v): on Hopper, wgmma reading a
    // from them (or from its atoms where it is staged), where the result's layout is wgmma's
    // accumulators' (every warp its own 16 rows of each 16 NT_WM, whole warpgroups).
    layout.swizzled =
        warpgroup_result(n) + " && (" + c(simplify(dot->operands[0]->type.shape[1], env_)) + ") % 16 == 0";
    padded += " && !(" + layout.swizzled + ")";
  }
  layout.pitch = padded + " ? " + layout.columns + " + " + std::to_string(pad) + " : " + layout.columns;
  return layout;
}

std::string Emitter::declare_operand_array(const std::string& type, const std::string& name,
                                           const std::vector<Expr>& shape, const StagedLayout& layout,
                                           int pad, int element_bytes, const std::string& copies,
                                           const std::string& attributes) {
  array_size(shape, "a dot operand");  // the sizes must be known at build time
  const std::string one = c(simplify(shape[0], env_)) + " * (" + layout.pitch + ")";
  // Padded only in the mma layout; the padding counts only there (kMmaLayoutSymbol).
  const Expr padded = add(shape[1], mul(var(kMmaLayoutSymbol), static_cast<int64_t>(pad)));
  Expr bytes = mul(mul(shape[0], padded), static_cast<int64_t>(element_bytes));
  // NT_STAGES copies, or NT_ASYNC_BUFFERS: one more where NT_WGMMA_DEFER (kWgmmaDeferSymbol).
  if (copies == kAsyncBuffersMacro)
    bytes = mul(add(var(kStagesSymbol), var(kWgmmaDeferSymbol)), bytes);
  else if (!copies.empty())
    bytes = mul(var(kStagesSymbol), bytes);
  // wgmma's swizzled atoms repeat every 1024 bytes (nt_wgmma_at()).
  declare_local(type, name, copies.empty() ? one : copies + " * " + one, bytes, attributes,
                layout.swizzled.empty() ? 16 : 1024);
  return one;
}

void Emitter::collect_mma_shapes() {
  struct Dots : IRVisitor {
    using IRVisitor::visit;
    void visit(const Value& v) override {
      if (v->kind == ValueKind::Dot && !mma_type(v).empty()) dots.push_back(v);
      IRVisitor::visit(v);
    }
    std::vector<Value> dots;
  } dots;
  dots.visit(k_.body);
  for (const Value& dot : dots.dots) mma_shapes_.insert(shape_key(dot->type.shape));
  if (!d_.mma_async_staging) return;
  // Dots that may read their a from registers (registers_of_a()): a warp holds whole rows of it and
  // of their result. Only where a's shape is a dot result's too (flash attention's p, q k's):
  // other shapes' layouts are never mma ones.
  for (const Value& dot : dots.dots) {
    if (!register_operand(dot) || !mma_shapes_.count(shape_key(dot->operands[0]->type.shape))) continue;
    row_warp_shapes_.insert(shape_key(dot->operands[0]->type.shape));
    row_warp_shapes_.insert(shape_key(dot->type.shape));
  }
  // Warpgroup MMAs' layouts for k loops' accumulations (`acc += dot(a, b)`, accumulated_dots()).
  // (Attention's dots, their results read at once, keep their rows-a-warp layouts, on wgmma where
  // those are its accumulators': operand_layout().)
  struct Loops : IRVisitor {
    using IRVisitor::visit;
    void visit(const Stmt& s) override {
      if (s->kind == StmtKind::For) loops.push_back(s);
      IRVisitor::visit(s);
    }
    std::vector<Stmt> loops;
  } loops;
  loops.visit(k_.body);
  for (const Stmt& loop : loops.loops)
    for (const StmtNode* s : accumulated_dots(loop))
      wgmma_shapes_.insert(shape_key(s->value->operands[1]->type.shape));
}

const Value* register_operand(const Value& dot) {
  const std::string mma = mma_type(dot);
  if (mma != "f16" && mma != "bf16") return nullptr;
  const Value* a = &dot->operands[0];
  // p.to(float16): a float rounded once to the 16-bit type, as its staged store would round it.
  if ((*a)->kind == ValueKind::Cast) {
    const Value& from = (*a)->operands[0];
    if (from->type.dtype != DType::float32 && from->type.dtype != (*a)->type.dtype) return nullptr;
    a = &from;
  }
  return (*a)->kind == ValueKind::LetRef || (*a)->kind == ValueKind::LocalRef ? a : nullptr;
}

HeldOperand Emitter::registers_of_a(const Value& dot) {
  HeldOperand held;
  const Value* v = d_.mma_async_staging ? register_operand(dot) : nullptr;
  if (!v) return held;
  const std::string& name = (*v)->kind == ValueKind::LetRef ? lets_.at((*v)->id) : locals_.at((*v)->id);
  const std::vector<Expr>& shape = dot->operands[0]->type.shape;
  if (!row_warp_shapes_.count(shape_key(shape)) || !is_distributed(name) || !aligned_layout(name, shape))
    return held;
  held.array = name;
  held.layout = tile_layout(shape);
  // Both layouts mma ones with whole rows a warp (row_warps: lower/program_layout.h) and as many
  // warps down: a work-item holds the same rows of both. a's columns are k, in steps of 16.
  const std::string a = std::to_string(held.layout), n = std::to_string(tile_layout(dot->type.shape));
  held.condition = "NT_HELD_A && NT_MMA" + a + " && NT_MMA" + n + " && NT_WN" + a + " == 1 && NT_WN" + n +
                   " == 1 && NT_WM" + a + " == NT_WM" + n + " && NT_ROWS" + a + " == NT_ROWS" + n +
                   " && NT_COLS" + a + " % 16 == 0";
  return held;
}

std::string Emitter::pitched_operand(const Value& v, DType dtype, const StagedLayout& layout, int pad,
                                     StagedLayout& used, bool& native) {
  // Loaded ahead by its k loop, or before it (emitter_pipeline.cpp), laid out as its first dot asked.
  if (auto staged = staged_operands_.find(v.get()); staged != staged_operands_.end()) {
    used = staged->second.second;
    native = true;
    return staged->second.first;
  }
  std::string found = held_array(v, dtype);
  used = StagedLayout{c(simplify(v->type.shape[1], env_)), "", layout.rows, layout.columns};
  native = false;
  if (!found.empty()) return found;
  native = d_.mma_async_staging;
  used = layout;
  return staged_operand(v, dtype, layout, pad, "nt_op");
}

std::string Emitter::staged_operand(const Value& v, DType dtype, const StagedLayout& layout, int pad,
                                    const std::string& prefix) {
  const std::string name = fresh(prefix);
  const bool native = d_.mma_async_staging;
  std::string ct = native ? staged_type(v->type.dtype) : compute_type(dtype);
  // Aligned for pairs: write_mma_steps() reads two floats of a row at once.
  declare_operand_array(ct, name, v->type.shape, layout, pad,
                        native ? staged_size(v->type.dtype) : c_size(ct), "", " __attribute__((aligned(8)))");
  barrier();
  // A conversion to the staged 16-bit type (p.to(float16)) is the staged store's own rounding.
  const bool rounds = native && v->kind == ValueKind::Cast &&
                      (v->type.dtype == DType::float16 || v->type.dtype == DType::bfloat16);
  auto copy = [&](const std::vector<Expr>& i) {
    const std::string at = layout.at(c(i[0]), c(i[1]));
    line_(native ? staged_store(v->type.dtype, name, at, elem(rounds ? v->operands[0] : v, i))
                 : name + "[" + at + "] = (" + ct + ")(" + elem(v, i) + ");");
  };
  if (native)
    nest(v->type.shape, {v}, nullptr, copy, false, [&] { copy_staged_rows(v, name, layout, copy); });
  else
    nest(v->type.shape, {v}, nullptr, copy);
  if (!layout.swizzled.empty()) line_("NT_ASYNC_PROXY_FENCE();");  // wgmma reads what these stores wrote
  barrier();
  return name;
}

void Emitter::emit_dot_group(const Value& v, const std::string& result, bool accumulate) {
  const Value& a = v->operands[0];
  const Value& b = v->operands[1];
  DType dt = v->type.dtype;
  std::string ct = compute_type(dt);
  std::string M = c(simplify(a->type.shape[0], env_)), K = c(simplify(a->type.shape[1], env_)),
              N = c(simplify(b->type.shape[1], env_));
  const int layout = tile_layout(v->type.shape);
  const std::string n = std::to_string(layout);
  const std::string mma = mma_shapes_.count(shape_key(v->type.shape)) ? mma_type(v) : "";
  std::string A, B;
  StagedLayout la{K, "", M, K}, lb{N, "", K, N};  // where the operands' elements lie
  bool pairs = false;             // a's rows in local memory padded and aligned: even k starts a float pair
  bool a16 = false, b16 = false;  // staged in their own type (pitched_operand())
  // b = trans(x) staged as x: b's element (k, n) at element (n, k) of lb (staged_value()).
  const Value stored_b = mma.empty() ? b : staged_value(v, 1);
  const bool bt = stored_b.get() != b.get();
  std::string wgmma;  // this dot's condition for warpgroup MMAs (its operands' swizzle), or ""
  // a in registers (flash attention's p): staged only where they are not its fragments.
  HeldOperand held_a = mma.empty() || is_tf32(mma) ? HeldOperand{} : registers_of_a(v);
  if (held_a.array == result) held_a = {};  // x += dot(x, w): the mmas would change a as they read it
  if (mma.empty()) {
    A = as_array(a, dt, "a dot operand");
    B = as_array(b, dt, "a dot operand");
  } else {
    int pad_a = 0, pad_b = 0;
    const StagedLayout padded_a = operand_layout(v, 0, pad_a), padded_b = operand_layout(v, 1, pad_b);
    if (!held_a.array.empty()) {
      line_("#ifdef NT_MMA_SYNC");
      line_("if (!(" + held_a.condition + "))");
      line_("#endif");
      open("");
    }
    A = pitched_operand(a, dt, padded_a, pad_a, la, a16);
    if (!held_a.array.empty()) close();
    pairs = la.pitch != K && !a16;
    B = pitched_operand(stored_b, dt, padded_b, pad_b, lb, b16);
    wgmma = padded_a.swizzled;
  }
  // An element of an operand array, as the compute type.
  auto read = [&](const Value& operand, const std::string& array, bool native, const std::string& at) {
    return native ? staged_load(operand->type.dtype, array, at) : array + "[" + at + "]";
  };
  auto d = distributed_.find(result);
  bool held = d != distributed_.end();
  if (held && (!aligned_layout(result, v->type.shape))) {
    misaligned_.insert(d->second);
    held = false;
  }
  open("");
  std::string tx = fresh("nt_tx"), ty = fresh("nt_ty"), acc = held ? result : fresh("nt_acc");
  line_(lane_coordinates(layout, tx, ty));
  std::string slots = "NT_R" + n + " * NT_C" + n;
  if (!held) line_(ct + " " + acc + "[" + slots + "];");
  auto each =
      [&](const std::function<void(const std::string& i, const std::string& j, const std::string& slot)>& f) {
        line_("NT_UNROLL");
        open("for (int nt_r = 0; nt_r < NT_R" + n + "; ++nt_r)");
        line_("NT_UNROLL");
        open("for (int nt_c = 0; nt_c < NT_C" + n + "; ++nt_c)");
        f("NT_ROW" + n + "(" + ty + ", nt_r)", "NT_COL" + n + "(" + tx + ", nt_c)",
          "nt_r * NT_C" + n + " + nt_c");
        close();
        close();
      };
  if (!held || !accumulate) {
    each([&](const std::string& i, const std::string& j, const std::string& slot) {
      std::string start = "0";
      if (accumulate)
        start = "(" + i + " < " + M + " && " + j + " < " + N + ") ? " + result + "[" + i + " * " + N + " + " +
                j + "] : 0";
      line_(acc + "[" + slot + "] = " + start + ";");
    });
  }
  if (!mma.empty()) {
    line_("#ifdef NT_MMA_SYNC");
    open("if (NT_MMA" + n + " && (" + K + ") % " + (is_tf32(mma) ? "8" : "16") + " == 0)");
    if (is_tf32(mma)) {
      write_tf32_steps(*this, {mma == "tf32x3", layout, tx, ty, acc, A, B, K, la.pitch, lb.pitch});
    } else {
      if (!held_a.array.empty()) {
        open("if (" + held_a.condition + ")");
        // On Hopper, b from its atoms, where b is staged in them, and a from these registers, or
        // from its atoms where it is staged in them before the loop (attention's q: its registers
        // are then free for the loop).
        const bool warpgroups = b16 && !lb.swizzled.empty();
        if (warpgroups) {
          const bool staged_a = a16 && !la.swizzled.empty() && staged_operands_.count(a.get());
          std::string condition = lb.swizzled;
          if (staged_a && la.swizzled != condition)
            condition = "(" + condition + ") && (" + la.swizzled + ")";
          // (b staged for another dot: its atoms' condition need not be this result layout's.)
          if (condition != wgmma) condition = "(" + condition + ") && " + warpgroup_result(n);
          line_("#ifdef NT_WGMMA");
          open("if (" + condition + ")");
          write_wgmma_steps(*this, {mma, layout, acc, A, la.rows, la.columns, B, lb.rows, lb.columns, K, bt,
                                    "", staged_a ? nullptr : &held_a});
          close("} else");
          line_("#endif");
          open("");
        }
        write_mma_steps(*this, {mma, layout, tx, ty, acc, A, B, K, la, lb, false, false, b16, bt, &held_a,
                                std::string(d_.local_pointer)});
        if (warpgroups) close();
        close("} else");
        open("");
      }
      // On Hopper, for a dot of a wgmma shape (its own operands' layout swizzled) whose operands are
      // both staged in wgmma's atoms (a held one, or one staged for another dot, may not be: then
      // mma.sync, its ldmatrix reading each operand where its layout puts it).
      const bool warpgroups = a16 && b16 && !wgmma.empty() && !la.swizzled.empty() && !lb.swizzled.empty();
      if (warpgroups) {
        for (const std::string& c : {la.swizzled, lb.swizzled})
          if (c != wgmma) wgmma = "(" + wgmma + ") && (" + c + ")";
        line_("#ifdef NT_WGMMA");
        open("if (" + wgmma + ")");
        // In a loop that waits for its dots' groups itself (emit_for_loop()), an accumulator held in
        // the tile layout is left to it.
        // (An operand staged here, in the iteration, is rewritten by the next one while the group
        // might still read it; x = x + dot(x.to(float16), w[k]) also reads its accumulator.)
        const bool defer = deferrable_dots_.count(v.get()) && held && accumulate && held_a.array.empty() &&
                           staged_operands_.count(a.get()) && staged_operands_.count(stored_b.get());
        if (defer) deferred_wgmma_.emplace_back(acc, layout);
        write_wgmma_steps(*this, {mma, layout, acc, A, la.rows, la.columns, B, lb.rows, lb.columns, K, bt,
                                  defer ? "NT_WGMMA_DEFER" : ""});
        close("} else");
        line_("#endif");
        open("");
      }
      write_mma_steps(*this, {mma, layout, tx, ty, acc, A, B, K, la, lb, pairs, a16, b16, bt, nullptr,
                              std::string(d_.local_pointer)});
      if (warpgroups) close();
      if (!held_a.array.empty()) close();
    }
    close("} else");
    line_("#endif");
  }
  bool f = dtype_is_float(dt);
  open("");
  open("for (nt_index nt_k = 0; nt_k < " + K + "; ++nt_k)");
  line_(ct + " nt_a[NT_R" + n + "], nt_b[NT_C" + n + "];");
  line_("NT_UNROLL");
  open("for (int nt_r = 0; nt_r < NT_R" + n + "; ++nt_r)");
  line_("const nt_index nt_i = NT_ROW" + n + "(" + ty + ", nt_r);");
  line_("nt_a[nt_r] = nt_i < " + M + " ? " + read(a, A, a16, la.at("nt_i", "nt_k")) + " : 0;");
  close();
  line_("NT_UNROLL");
  open("for (int nt_c = 0; nt_c < NT_C" + n + "; ++nt_c)");
  line_("const nt_index nt_j = NT_COL" + n + "(" + tx + ", nt_c);");
  const std::string at_b = bt ? lb.at("nt_j", "nt_k") : lb.at("nt_k", "nt_j");
  line_("nt_b[nt_c] = nt_j < " + N + " ? " + read(b, B, b16, at_b) + " : 0;");
  close();
  each([&](const std::string&, const std::string&, const std::string& slot) {
    std::string x = acc + "[" + slot + "]";
    line_(x + " = " + (f ? "fma(nt_a[nt_r], nt_b[nt_c], " + x + ")" : x + " + nt_a[nt_r] * nt_b[nt_c]") +
          ";");
  });
  close();
  close();
  if (!held) {
    barrier();
    each([&](const std::string& i, const std::string& j, const std::string& slot) {
      line_("if (" + i + " < " + M + " && " + j + " < " + N + ") " + result + "[" + i + " * " + N + " + " +
            j + "] = " + acc + "[" + slot + "];");
    });
    barrier();
  }
  close();
}

}  // namespace nt::codegen
