// Reductions as C (reduction_c.h).
#include "codegen/c/reduction_c.h"

#include "codegen/c/c_types.h"

namespace nt::codegen {

std::string reduce_init(ReduceFn fn, DType in) {
  bool f = dtype_is_float(in);
  std::string xt = compute_type(in);
  if (!f && xt == "int" && in == DType::boolean && fn != ReduceFn::Sum)  // a sum counts from 0
    return fn == ReduceFn::Max || fn == ReduceFn::ArgMax ? "0" : "1";
  switch (fn) {
    case ReduceFn::Sum:
      return "0";
    case ReduceFn::Max:
    case ReduceFn::ArgMax:
      return f ? "-INFINITY" : limit_macro(xt, false);
    case ReduceFn::Min:
    case ReduceFn::ArgMin:
      return f ? "INFINITY" : limit_macro(xt, true);
  }
  return "0";
}

std::string combine_c(ReduceFn fn, bool f, const std::string& acc, const std::string& value) {
  if (fn == ReduceFn::Sum) return "(" + acc + " + " + value + ")";
  bool max = fn == ReduceFn::Max;
  return std::string(f ? (max ? "fmax(" : "fmin(") : (max ? "max(" : "min(")) + acc + ", " + value + ")";
}

void write_combine_partner(CodeWriter& out, ReduceFn fn, bool f, const std::string& mine,
                           const std::string& theirs, const std::string& best_mine,
                           const std::string& best_theirs) {
  auto line_ = [&](const std::string& s) { out.emit_line(s); };
  auto open = [&](const std::string& s) { out.emit_open(s); };
  auto close = [&] { out.emit_close(); };
  if (best_mine.empty()) {
    line_(mine + " = " + combine_c(fn, f, mine, theirs) + ";");
    return;
  }
  // The better value, and of equal ones the first index.
  open("if (" + theirs + (fn == ReduceFn::ArgMax ? " > " : " < ") + mine + " || (" + theirs + " == " + mine +
       " && " + best_theirs + " < " + best_mine + "))");
  line_(mine + " = " + theirs + ";");
  line_(best_mine + " = " + best_theirs + ";");
  close();
}

void write_row_combine(CodeWriter& out, const RowCombine& r) {
  auto line_ = [&](const std::string& s) { out.emit_line(s); };
  auto open = [&](const std::string& s) { out.emit_open(s); };
  auto close = [&] { out.emit_close(); };
  const std::string n = std::to_string(r.layout), W = "NT_WORK_ITEMS", R = "NT_R" + n;
  const ReduceFn fn = r.fn;
  const bool f = r.is_float, arg = r.arg, scalar = r.scalar;
  const std::string &acc = r.acc, &best = r.best, &parts = r.parts, &bests = r.bests, &tx = r.tx, &ty = r.ty,
                    &s = r.s, &name = r.result, &ct = r.result_type;
  const std::string lane = "NT_VLANE" + n;  // the work-items of a row are consecutive in it
  // The work-items of a row are NT_TX consecutive ones. Where a warp's work-items exchange
  // registers, the first `span` of them (those in one warp: work-item i's neighbours are i ^ 1,
  // i ^ 2, ... in the layouts' lanes, up to 4 in the mma layout, whose next ones are other warps)
  // combine by shuffles first; local memory takes the rest.
  const bool shuffles = !r.span.empty();
  const std::string span = shuffles ? r.span : "1";
  if (shuffles) {
    const std::string tx_n = "NT_TX" + n;
    const std::string in_warp = r.mma_shape
                                    ? "(NT_MMA" + n + " ? NT_MIN(" + tx_n + ", 4) : NT_MIN(" + tx_n + ", 32))"
                                    : "NT_MIN(" + tx_n + ", 32)";
    line_("const nt_index " + span + " = NT_WORK_ITEMS % 32 == 0 ? " + in_warp + " : 1;");
    open("for (int nt_r = 0; nt_r < " + R + "; ++nt_r)");
    line_("NT_UNROLL");
    open("for (nt_index " + s + " = 1; " + s + " < " + span + "; " + s + " *= 2)");
    line_(acc + "[nt_r] = " +
          combine_c(fn, f, acc + "[nt_r]", "NT_SHUFFLE_XOR(" + acc + "[nt_r], " + s + ")") + ";");
    close();
    close();
  }
  // Then a tree over the row's groups of `span` in local memory, all rows at once.
  if (shuffles) open("if (NT_TX" + n + " > " + span + ")");
  open("for (int nt_r = 0; nt_r < " + R + "; ++nt_r)");
  line_(parts + "[nt_r * " + W + " + " + lane + "] = " + acc + "[nt_r];");
  if (arg) line_(bests + "[nt_r * " + W + " + " + lane + "] = " + best + "[nt_r];");
  close();
  line_("NT_BARRIER();");
  open("for (nt_index " + s + " = NT_TX" + n + " / 2; " + s + (shuffles ? " >= " + span : " > 0") + "; " + s +
       " /= 2)");
  open("if (" + tx + " < " + s + ")");
  open("for (int nt_r = 0; nt_r < " + R + "; ++nt_r)");
  const std::string slot = "[nt_r * " + W + " + " + lane, partner = slot + " + " + s + "]";
  write_combine_partner(out, fn, f, parts + slot + "]", parts + partner, arg ? bests + slot + "]" : "",
                        arg ? bests + partner : "");
  close();
  close();
  line_("NT_BARRIER();");
  close();
  if (r.held) {
    // Every work-item of the row takes the result from its first work-item's partial.
    open("for (int nt_r = 0; nt_r < " + R + "; ++nt_r)");
    line_(acc + "[nt_r] = " + parts + "[nt_r * " + W + " + " + lane + " - " + tx + "];");
    close();
    line_("NT_BARRIER();");
  }
  if (shuffles) close();
  if (r.held) {
    open("for (int nt_r = 0; nt_r < " + R + "; ++nt_r)");
    line_(name + "[nt_r] = (" + ct + ")" + acc + "[nt_r];");
    close();
    return;
  }
  open("if (" + tx + " == 0)");
  open("for (int nt_r = 0; nt_r < " + R + "; ++nt_r)");
  line_("const nt_index nt_row = NT_ROW" + n + "(" + ty + ", nt_r);");
  std::string result = (arg ? bests : parts) + "[nt_r * " + W + " + " + lane + "]";
  if (shuffles) result = "(NT_TX" + n + " > " + span + " ? " + result + " : " + acc + "[nt_r])";
  line_("if (nt_row < NT_ROWS" + n + ") " + (scalar ? name : name + "[nt_row]") + " = (" + ct + ")" + result +
        ";");
  close();
  close();
  line_("NT_BARRIER();");
}

}  // namespace nt::codegen
