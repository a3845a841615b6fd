#include "ir/printer.h"

#include <sstream>

#include "ir/builder.h"
#include "symbolic/printer.h"

namespace nt::ir {

namespace {

std::string list(const std::vector<Value>& values) {
  std::string s;
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + to_string(values[i]);
  return s;
}

}  // namespace

std::string type_string(const Type& type) {
  std::string s = std::string(dtype_name(type.dtype));
  if (type.weak) s = "weak " + s;
  if (!type.is_scalar()) s += shape_string(type.shape);
  return s;
}

std::string to_string(const Value& v) {
  const auto& ops = v->operands;
  switch (v->kind) {
    case ValueKind::Constant:
      return to_python(v->expr);
    case ValueKind::ScalarParam:
      return "param" + std::to_string(v->param);
    case ValueKind::Load:
      return "load(param" + std::to_string(v->param) + (ops.empty() ? "" : "[" + list(ops) + "]") + ")";
    case ValueKind::LoadAt:
      return "load_at(param" + std::to_string(v->param) + "[" + list(ops) + "])";
    case ValueKind::LoopVar:
      return v->name;
    case ValueKind::LetRef:
      return "%let" + std::to_string(v->id);
    case ValueKind::LocalRef:
      return "%local" + std::to_string(v->id);
    case ValueKind::Arange:
      return "arange(" + to_python(v->expr) + ", " + to_python(v->expr2) + ")";
    case ValueKind::Full:
      return "full(" + shape_string(v->type.shape) + ", " + to_string(ops[0]) + ")";
    case ValueKind::Unary:
      return std::string(unary_fn_name(static_cast<UnaryFn>(v->op))) + "(" + to_string(ops[0]) + ")";
    case ValueKind::Binary: {
      auto fn = static_cast<BinaryFn>(v->op);
      if (fn >= BinaryFn::Maximum && fn <= BinaryFn::Pow)
        return std::string(binary_fn_name(fn)) + "(" + list(ops) + ")";
      return "(" + to_string(ops[0]) + " " + binary_fn_name(fn) + " " + to_string(ops[1]) + ")";
    }
    case ValueKind::Where:
      return "where(" + list(ops) + ")";
    case ValueKind::Cast:
      return "cast<" + std::string(dtype_name(v->type.dtype)) + ">(" + to_string(ops[0]) + ")";
    case ValueKind::ExpandDims:
      return "expand_dims(" + to_string(ops[0]) + ", " + std::to_string(v->axis) + ")";
    case ValueKind::Broadcast:
      return "broadcast(" + to_string(ops[0]) + ", " + shape_string(v->type.shape) + ")";
    case ValueKind::Trans:
      return "trans(" + to_string(ops[0]) + ")";
    case ValueKind::Reduce:
      return std::string(reduce_fn_name(static_cast<ReduceFn>(v->op))) + "(" + to_string(ops[0]) +
             (v->axis >= 0 ? ", axis=" + std::to_string(v->axis) : "") + (v->keep_dims ? ", keep_dims" : "") +
             ")";
    case ValueKind::Offsets:
      return "offsets(param" + std::to_string(v->param) + (ops.empty() ? "" : "[" + list(ops) + "]") +
             (v->axis >= 0 ? ", dim=" + std::to_string(v->axis) : "") + ")";
    case ValueKind::PointerBase:
      return "data_ptr(param" + std::to_string(v->param) + ")";
    case ValueKind::LoadPointer:
      return "load_pointer(" + list(ops) + ")";
    case ValueKind::Random:
      return std::string(v->op ? "randn(" : "rand(") + list(ops) + ")";
    case ValueKind::Fma:
      return "fma(" + list(ops) + ")";
    case ValueKind::ProgramId:
      return "program_id(" + std::to_string(v->axis) + ")";
    case ValueKind::Dot:
      if (v->op == static_cast<int>(DotPrecision::Tf32))
        return "dot(" + list(ops) + ", input_precision=\"tf32\")";
      if (v->op == static_cast<int>(DotPrecision::Tf32x3))
        return "dot(" + list(ops) + ", input_precision=\"tf32x3\")";
      return "dot(" + list(ops) + ")";
    case ValueKind::Call:
      return v->name + "(" + list(ops) + ")";
    case ValueKind::Rearrange: {
      static const char* names[] = {"reshape", "permute", "flip", "cat", "join", "take"};
      std::string s = std::string(names[v->op]) + "(" + list(ops);
      for (int i : v->ints) s += ", " + std::to_string(i);
      return s + ")" + (v->op == 0 ? shape_string(v->type.shape) : "");
    }
    case ValueKind::CombineArg:
      return "%arg" + std::to_string(v->axis);
    case ValueKind::Combine:
      return std::string(v->op ? "scan(" : "reduce(") + list(ops) + ", axis=" + std::to_string(v->axis) +
             ", combine=(" + list(v->combine) + "))";
    case ValueKind::Extract:
      return to_string(ops[0]) + "[" + std::to_string(v->op) + "]";
    case ValueKind::Sort:
      return std::string(v->ints[0] >= 0 ? "topk(" : "sort(") + to_string(ops[0]) +
             ", dim=" + std::to_string(v->axis) + (v->op ? ", descending" : "") + ")";
    case ValueKind::Gather:
      return "gather(" + list(ops) + ", axis=" + std::to_string(v->axis) + ")";
    case ValueKind::Histogram:
      return "histogram(" + list(ops) + ", bins=" + std::to_string(v->ints[0]) + ")";
  }
  return "?";
}

std::string to_string(const StmtList& stmts, int indent) {
  // Integers are appended as std::to_string, not streamed: on the lent GPU machine the module's
  // ostream number formatting crashed once torch had been imported.
  std::ostringstream os;
  std::string pad(indent * 2, ' ');
  for (const Stmt& s : stmts) {
    switch (s->kind) {
      case StmtKind::Let:
        os << pad << "%let" + std::to_string(s->id) << ": " << type_string(s->value->type) << " = "
           << to_string(s->value) << "\n";
        break;
      case StmtKind::DeclareLocal:
        os << pad << "local %local" + std::to_string(s->id) << ": " << type_string(s->value->type) << " = "
           << to_string(s->value) << "\n";
        break;
      case StmtKind::Assign:
        os << pad << "%local" + std::to_string(s->id) << " = " << to_string(s->value) << "\n";
        break;
      case StmtKind::StorePointer:
      case StmtKind::AtomicAdd:
        os << pad << (s->kind == StmtKind::AtomicAdd ? "atomic_add" : "store_pointer") << "("
           << list(s->indices) << ")\n";
        break;
      case StmtKind::Store:
        os << pad << "store param" + std::to_string(s->param)
           << (s->indices.empty() ? "" : "[" + list(s->indices) + "]") << " = " << to_string(s->value)
           << "\n";
        break;
      case StmtKind::StoreAt:
        os << pad << "store_at param" + std::to_string(s->param) << "[" << list(s->indices)
           << "] = " << to_string(s->value) << "\n";
        break;
      case StmtKind::For:
        os << pad << "for " << s->var << " in range(" << to_string(s->start) << ", " << to_string(s->stop)
           << ", " << to_string(s->step) << "):\n"
           << to_string(s->body, indent + 1);
        break;
      case StmtKind::Atomic:
        os << pad << "%let" + std::to_string(s->id)
           << " = atomic" + std::to_string(s->op) + "(param" + std::to_string(s->param) + ", "
           << list(s->indices) << ")\n";
        break;
      case StmtKind::Print:
        os << pad << "device_print(\"" << s->var << "\", " << list(s->indices) << ")\n";
        break;
      case StmtKind::Assert:
        os << pad << "device_assert(" << to_string(s->value) << ", \"" << s->var << "\")\n";
        break;
      case StmtKind::If:
        os << pad << "if " << to_string(s->value) << ":\n" << to_string(s->body, indent + 1);
        if (!s->orelse.empty()) os << pad << "else:\n" << to_string(s->orelse, indent + 1);
        break;
    }
  }
  return os.str();
}

std::string to_string(const Kernel& kernel) {
  std::ostringstream os;
  os << "kernel " << kernel.name << "(";
  for (size_t i = 0; i < kernel.params.size(); ++i) {
    const Param& p = kernel.params[i];
    os << (i ? ", " : "") << "param" + std::to_string(i) + " " << p.name << ": " << dtype_name(p.dtype);
    if (p.scalar)
      os << (p.constexpr_ ? " constexpr" : " scalar");
    else
      os << " block" << shape_string(p.block_shape());
  }
  os << "):\n" << to_string(kernel.body, 1);
  return os.str();
}

}  // namespace nt::ir
