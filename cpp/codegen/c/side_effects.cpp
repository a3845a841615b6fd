// OpenCL C of the statements with side effects beyond stores: atomics that
// return old values, device_print and device_assert (see block_ops.h).
#include <stdexcept>

#include "codegen/c/block_ops.h"
#include "codegen/c/c_types.h"

namespace nt::codegen {

using namespace nt::ir;

const char* const kAtomicPreamble =
    R"(// Atomics returning the old value: floats by compare-and-swap on their bits.
#ifdef cl_khr_int64_extended_atomics
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
#endif
#define NT_FLOAT_ATOMIC(NAME, T, U, CAS, EXPR) \
  inline T NAME(volatile __global T* p, T v) { \
    union { U u; T f; } old, next; \
    do { \
      old.f = *p; \
      next.f = (EXPR); \
    } while (CAS((volatile __global U*)p, old.u, next.u) != old.u); \
    return old.f; \
  }
NT_FLOAT_ATOMIC(nt_atomic_add_f, float, uint, atomic_cmpxchg, old.f + v)
NT_FLOAT_ATOMIC(nt_atomic_max_f, float, uint, atomic_cmpxchg, fmax(old.f, v))
NT_FLOAT_ATOMIC(nt_atomic_min_f, float, uint, atomic_cmpxchg, fmin(old.f, v))
inline float nt_atomic_cas_f(volatile __global float* p, float cmp, float v) {
  return as_float(atomic_cmpxchg((volatile __global uint*)p, as_uint(cmp), as_uint(v)));
}
#ifdef cl_khr_int64_base_atomics
NT_FLOAT_ATOMIC(nt_atomic_add_d, double, ulong, atom_cmpxchg, old.f + v)
NT_FLOAT_ATOMIC(nt_atomic_max_d, double, ulong, atom_cmpxchg, fmax(old.f, v))
NT_FLOAT_ATOMIC(nt_atomic_min_d, double, ulong, atom_cmpxchg, fmin(old.f, v))
inline double nt_atomic_xchg_d(volatile __global double* p, double v) {
  return as_double(atom_xchg((volatile __global ulong*)p, as_ulong(v)));
}
inline double nt_atomic_cas_d(volatile __global double* p, double cmp, double v) {
  return as_double(atom_cmpxchg((volatile __global ulong*)p, as_ulong(cmp), as_ulong(v)));
}
#endif
)";

namespace {

// The C call that applies `fn` at `address` and yields the old value.
std::string atomic_call(AtomicFn fn, DType dtype, const std::string& address, const std::string& value,
                        const std::string& compare) {
  bool f32 = dtype == DType::float32, f64 = dtype == DType::float64;
  bool wide = dtype_bytes(dtype) == 8;
  if (f32 || f64) {
    std::string suffix = f32 ? "_f(" : "_d(";
    switch (fn) {
      case AtomicFn::Add:
        return "nt_atomic_add" + suffix + address + ", " + value + ")";
      case AtomicFn::Max:
        return "nt_atomic_max" + suffix + address + ", " + value + ")";
      case AtomicFn::Min:
        return "nt_atomic_min" + suffix + address + ", " + value + ")";
      case AtomicFn::Xchg:
        return f32 ? "atomic_xchg(" + address + ", " + value + ")"
                   : "nt_atomic_xchg_d(" + address + ", " + value + ")";
      case AtomicFn::Cas:
        return "nt_atomic_cas" + suffix + address + ", " + compare + ", " + value + ")";
      default:
        throw std::logic_error("codegen: a bitwise atomic of floats");
    }
  }
  static const char* names[] = {"add", "max", "min", "and", "or", "xor", "xchg", "cmpxchg"};
  std::string name = std::string(wide ? "atom_" : "atomic_") + names[static_cast<int>(fn)];
  if (fn == AtomicFn::Cas) return name + "(" + address + ", " + compare + ", " + value + ")";
  return name + "(" + address + ", " + value + ")";
}

std::string printf_format(DType dtype, bool hex) {
  switch (dtype) {
    case DType::float16:
    case DType::bfloat16:
    case DType::float32:
    case DType::float64:
    case DType::float8_e5m2:
    case DType::float8_e4m3fn:
      return hex ? "%a" : "%f";
    case DType::int64:
      return hex ? "0x%lx" : "%ld";
    case DType::uint64:
      return hex ? "0x%lx" : "%lu";
    case DType::uint8:
    case DType::uint16:
    case DType::uint32:
      return hex ? "0x%x" : "%u";
    default:
      return hex ? "0x%x" : "%d";
  }
}

std::string escaped(const std::string& text) {
  std::string out;
  for (char ch : text) {
    if (ch == '%') {
      out += "%%";
    } else if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (ch == '\n') {
      out += "\\n";
    } else {
      out += ch;
    }
  }
  return out;
}

// "pid (%ld, %ld) idx (%ld, %ld)" and its arguments, for element `index`.
std::pair<std::string, std::string> location(EmitContext& ctx, const std::vector<Expr>& index) {
  std::string format = "pid (", args;
  int dims = ctx.program_dims();
  for (int d = 0; d < dims; ++d) {
    format += std::string(d ? ", " : "") + "%ld";
    args += ", (long)nt_pid_" + std::to_string(d);
  }
  format += ") idx (";
  for (size_t d = 0; d < index.size(); ++d) {
    format += std::string(d ? ", " : "") + "%ld";
    args += ", (long)(" + ctx.index_c(index[d]) + ")";
  }
  return {format + ")", args};
}

void emit_atomic(EmitContext& ctx, const Stmt& s) {
  const Param& p = ctx.param(s->param);
  const Value& pointers = s->indices[0];
  const Type& type = pointers->type;
  auto fn = static_cast<AtomicFn>(s->op);
  std::string ct = compute_type(p.dtype), ptr = "nt_p" + std::to_string(s->param);
  std::string name = ctx.fresh_name("nt_old");
  bool keep = ctx.let_used(s->id);  // the old values, where the kernel reads them
  if (keep && type.is_scalar())
    ctx.declare_scalar(name, p.dtype);
  else if (keep)
    ctx.declare_array(name, type.shape, p.dtype, "the old values of an atomic");
  for (const Value& v : s->indices) ctx.materialize(v);
  ctx.emit_open("");
  ctx.each_index(type.shape, [&](const std::vector<Expr>& i) {
    std::string offset = ctx.fresh_name("nt_o");
    ctx.emit_line("const long " + offset + " = " + ctx.element(pointers, i) + ";");
    std::string inside = "((ulong)(" + offset + " + " + ptr + "_offset) < (ulong)" + ptr + "_extent)";
    std::string target = type.is_scalar() ? name : name + "[" + ctx.flat_c(type.shape, i) + "]";
    std::string call = atomic_call(fn, p.dtype, "&" + ptr + "[" + offset + "]", ctx.element(s->indices[1], i),
                                   ctx.element(s->indices[3], i));
    std::string condition = "(" + ctx.element(s->indices[2], i) + " && " + inside + ")";
    if (keep)
      ctx.emit_line(target + " = " + condition + " ? " + call + " : (" + ct + ")0;");
    else
      ctx.emit_line("if " + condition + " (void)" + call + ";");
  });
  ctx.emit_close();
  if (keep) ctx.bind_let(s->id, name);
}

void emit_print(EmitContext& ctx, const Stmt& s) {
  bool hex = s->op == 1;
  ctx.emit_open("");
  for (const Value& v : s->indices) ctx.materialize(v);
  size_t count = s->indices.size();
  if (count == 0) {
    auto [where, args] = location(ctx, {});
    ctx.emit_line("printf(\"" + where + " " + escaped(s->var) + "\\n\"" + args + ");");
  }
  for (size_t k = 0; k < count; ++k) {
    const Value& v = s->indices[k];
    ctx.each_index(v->type.shape, [&](const std::vector<Expr>& i) {
      auto [where, args] = location(ctx, i);
      std::string operand = count > 1 ? " (operand " + std::to_string(k) + ")" : "";
      std::string value = ctx.element(v, i);
      std::string cast = dtype_is_float(v->type.dtype) ? "(double)" : "";
      if (v->type.dtype == DType::int64) cast = "(long)";
      if (v->type.dtype == DType::uint64) cast = "(ulong)";
      if (!dtype_is_float(v->type.dtype) && dtype_bytes(v->type.dtype) < 8) {
        cast = dtype_is_signed(v->type.dtype) || v->type.dtype == DType::boolean ? "(int)" : "(uint)";
      }
      ctx.emit_line("printf(\"" + where + " " + escaped(s->var) + operand + " " +
                    printf_format(v->type.dtype, hex) + "\\n\"" + args + ", " + cast + "(" + value + "));");
    });
  }
  ctx.emit_close();
}

void emit_assert(EmitContext& ctx, const Stmt& s) {
  ctx.emit_open("");
  ctx.materialize(s->value);
  ctx.each_index(s->value->type.shape, [&](const std::vector<Expr>& i) {
    auto [where, args] = location(ctx, i);
    ctx.emit_line("if (" + ctx.element(s->value, i) + ") printf(\"" + where +
                  " device_assert failed: " + escaped(s->var) + "\\n\"" + args + ");");
  });
  ctx.emit_close();
}

}  // namespace

bool is_block_op_statement(StmtKind kind) {
  return kind == StmtKind::Atomic || kind == StmtKind::Print || kind == StmtKind::Assert;
}

void emit_block_op_statement(EmitContext& ctx, const Stmt& s) {
  switch (s->kind) {
    case StmtKind::Atomic:
      return emit_atomic(ctx, s);
    case StmtKind::Print:
      return emit_print(ctx, s);
    case StmtKind::Assert:
      return emit_assert(ctx, s);
    default:
      throw std::logic_error("codegen: not a block-operation statement");
  }
}

}  // namespace nt::codegen
