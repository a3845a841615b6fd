#include "symbolic/batch_eval.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <unordered_map>

#include "support/errors.h"
#include "symbolic/printer.h"

namespace nt {

namespace {

template <typename F>
void apply(const int64_t* a, const int64_t* b, int64_t* out, size_t n, F f) {
  for (size_t p = 0; p < n; ++p) out[p] = f(a[p], b[p]);
}

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// Lanes whose division has no value (a zero divisor) are marked in `poison`
// and computed on divisor 1; an output that depends on them raises.
void guard_divisors(const int64_t* a, const int64_t* b, size_t n, uint8_t* poison) {
  for (size_t p = 0; p < n; ++p) {
    if (b[p] == 0) poison[p] = 1;
    if (a[p] == kMin && b[p] == -1)
      throw std::overflow_error("integer division result does not fit in 64 bits");
  }
}

void run_binary(BinaryOp op, const int64_t* a, const int64_t* b, int64_t* out, size_t n, uint8_t* poison) {
  switch (op) {
    case BinaryOp::Add:
      apply(a, b, out, n, [](int64_t x, int64_t y) { return x + y; });
      return;
    case BinaryOp::Sub:
      apply(a, b, out, n, [](int64_t x, int64_t y) { return x - y; });
      return;
    case BinaryOp::Mul:
      apply(a, b, out, n, [](int64_t x, int64_t y) { return x * y; });
      return;
    case BinaryOp::FloorDiv:
      guard_divisors(a, b, n, poison);
      apply(a, b, out, n, [](int64_t x, int64_t y) {
        if (y == 0) return int64_t{0};
        int64_t q = x / y;
        return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
      });
      return;
    case BinaryOp::Mod:
      guard_divisors(a, b, n, poison);
      apply(a, b, out, n, [](int64_t x, int64_t y) {
        if (y == 0 || y == -1) return int64_t{0};
        int64_t r = x % y;
        return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
      });
      return;
    case BinaryOp::Lt:
      apply(a, b, out, n, [](int64_t x, int64_t y) -> int64_t { return x < y; });
      return;
    case BinaryOp::Le:
      apply(a, b, out, n, [](int64_t x, int64_t y) -> int64_t { return x <= y; });
      return;
    case BinaryOp::Gt:
      apply(a, b, out, n, [](int64_t x, int64_t y) -> int64_t { return x > y; });
      return;
    case BinaryOp::Ge:
      apply(a, b, out, n, [](int64_t x, int64_t y) -> int64_t { return x >= y; });
      return;
    case BinaryOp::Eq:
      apply(a, b, out, n, [](int64_t x, int64_t y) -> int64_t { return x == y; });
      return;
    case BinaryOp::Ne:
      apply(a, b, out, n, [](int64_t x, int64_t y) -> int64_t { return x != y; });
      return;
    case BinaryOp::And:
      apply(a, b, out, n, [](int64_t x, int64_t y) -> int64_t { return x != 0 ? y : x; });
      return;
    case BinaryOp::Or:
      apply(a, b, out, n, [](int64_t x, int64_t y) -> int64_t { return x != 0 ? x : y; });
      return;
    case BinaryOp::BitAnd:
      apply(a, b, out, n, [](int64_t x, int64_t y) { return x & y; });
      return;
    case BinaryOp::BitOr:
      apply(a, b, out, n, [](int64_t x, int64_t y) { return x | y; });
      return;
    case BinaryOp::Min:
      apply(a, b, out, n, [](int64_t x, int64_t y) { return std::min(x, y); });
      return;
    case BinaryOp::Max:
      apply(a, b, out, n, [](int64_t x, int64_t y) { return std::max(x, y); });
      return;
    case BinaryOp::TrueDiv:
      break;
  }
  throw ValueError("true division has no integer value");
}

}  // namespace

BatchProgram::BatchProgram(const std::vector<Expr>& inputs, const std::vector<Expr>& outputs)
    : inputs_(inputs) {
  for (const auto& output : outputs) output_slots_.push_back(emit(output));
  memo_.clear();
}

int BatchProgram::emit(const Expr& e) {
  auto memo = memo_.find(e.get());
  if (memo != memo_.end()) return memo->second;
  Instruction instruction{};
  switch (e->kind) {
    case ExprKind::Int:
    case ExprKind::Bool:
      instruction.op = Op::Const;
      instruction.constant = e->int_value;
      break;
    case ExprKind::Float:
      throw ValueError("cannot evaluate " + to_python(e) + " as an integer index expression");
    case ExprKind::Var: {
      auto it = std::find_if(inputs_.begin(), inputs_.end(),
                             [&](const Expr& input) { return input->name == e->name; });
      if (it == inputs_.end()) {
        throw ValueError("symbol '" + e->name + "' has no value; give it one in `subs`");
      }
      instruction.op = Op::Input;
      instruction.constant = it - inputs_.begin();
      break;
    }
    case ExprKind::Unary:
      instruction.op = e->unary_op == UnaryOp::Neg ? Op::Neg : Op::Not;
      instruction.a = emit(e->operands[0]);
      break;
    case ExprKind::Binary:
      if (e->binary_op == BinaryOp::TrueDiv) {
        throw ValueError("cannot evaluate " + to_python(e) + " as an integer index expression");
      }
      instruction.op = Op::Binary;
      instruction.binary_op = e->binary_op;
      instruction.a = emit(e->operands[0]);
      instruction.b = emit(e->operands[1]);
      break;
    case ExprKind::Select:
      instruction.op = Op::Select;
      instruction.a = emit(e->operands[0]);
      instruction.b = emit(e->operands[1]);
      instruction.c = emit(e->operands[2]);
      break;
  }
  instruction.may_poison = instruction.op == Op::Binary && (instruction.binary_op == BinaryOp::FloorDiv ||
                                                            instruction.binary_op == BinaryOp::Mod);
  for (int operand : {instruction.a, instruction.b, instruction.c}) {
    if (operand >= 0 && code_[static_cast<size_t>(operand)].may_poison) instruction.may_poison = true;
  }
  code_.push_back(instruction);
  int slot = static_cast<int>(code_.size()) - 1;
  memo_.emplace(e.get(), slot);
  return slot;
}

void BatchProgram::run(const int64_t* const* inputs, size_t n, int64_t* const* outputs) const {
  thread_local std::vector<int64_t> scratch;
  // Per slot and point: the value depends on a division by zero. Only the
  // rows of slots that can depend on a division are written or read.
  thread_local std::vector<uint8_t> poison;
  scratch.resize(code_.size() * kMaxBatch);
  poison.resize(code_.size() * kMaxBatch);
  auto slot = [&](int index) { return scratch.data() + static_cast<size_t>(index) * kMaxBatch; };
  auto poisoned = [&](int index) { return poison.data() + static_cast<size_t>(index) * kMaxBatch; };
  for (size_t i = 0; i < code_.size(); ++i) {
    const Instruction& instruction = code_[i];
    int64_t* out = slot(static_cast<int>(i));
    uint8_t* out_poison = poisoned(static_cast<int>(i));
    if (instruction.may_poison) std::fill(out_poison, out_poison + n, 0);
    switch (instruction.op) {
      case Op::Const:
        std::fill(out, out + n, instruction.constant);
        break;
      case Op::Input:
        std::copy(inputs[instruction.constant], inputs[instruction.constant] + n, out);
        break;
      case Op::Neg: {
        const int64_t* a = slot(instruction.a);
        for (size_t p = 0; p < n; ++p) {
          if (a[p] == kMin) throw std::overflow_error("integer negation result does not fit in 64 bits");
          out[p] = -a[p];
        }
        break;
      }
      case Op::Not: {
        const int64_t* a = slot(instruction.a);
        for (size_t p = 0; p < n; ++p) out[p] = a[p] == 0;
        break;
      }
      case Op::Binary:
        run_binary(instruction.binary_op, slot(instruction.a), slot(instruction.b), out, n, out_poison);
        break;
      case Op::Select: {
        const int64_t* c = slot(instruction.a);
        const int64_t* a = slot(instruction.b);
        const int64_t* b = slot(instruction.c);
        for (size_t p = 0; p < n; ++p) out[p] = c[p] ? a[p] : b[p];
        break;
      }
    }
    if (instruction.may_poison) propagate_poison(instruction, n, slot, poisoned, out_poison);
  }
  for (size_t k = 0; k < output_slots_.size(); ++k) {
    if (code_[static_cast<size_t>(output_slots_[k])].may_poison) {
      const uint8_t* bad = poisoned(output_slots_[k]);
      for (size_t p = 0; p < n; ++p) {
        if (bad[p]) throw ZeroDivisionError("integer division or modulo by zero");
      }
    }
    const int64_t* result = slot(output_slots_[k]);
    std::copy(result, result + n, outputs[k]);
  }
}

template <typename Slot, typename Poisoned>
void BatchProgram::propagate_poison(const Instruction& instruction, size_t n, Slot slot, Poisoned poisoned,
                                    uint8_t* out_poison) const {
  // Poison flows from operands, except from the branch a lazy operator
  // (`if`-`else`, `and`, `or`) does not take, as in Python. `taken(p)` says
  // whether the operand counts at point p.
  auto inherit = [&](int operand, auto taken) {
    if (operand < 0 || !code_[static_cast<size_t>(operand)].may_poison) return;
    const uint8_t* from = poisoned(operand);
    for (size_t p = 0; p < n; ++p) {
      if (taken(p)) out_poison[p] |= from[p];
    }
  };
  auto always = [](size_t) { return true; };
  const BinaryOp op = instruction.binary_op;
  if (instruction.op == Op::Select) {
    const int64_t* c = slot(instruction.a);
    inherit(instruction.a, always);
    inherit(instruction.b, [&](size_t p) { return c[p] != 0; });
    inherit(instruction.c, [&](size_t p) { return c[p] == 0; });
  } else if (instruction.op == Op::Binary && (op == BinaryOp::And || op == BinaryOp::Or)) {
    const int64_t* a = slot(instruction.a);
    inherit(instruction.a, always);
    inherit(instruction.b, [&](size_t p) { return (op == BinaryOp::And) == (a[p] != 0); });
  } else {
    inherit(instruction.a, always);
    inherit(instruction.b, always);
  }
}

}  // namespace nt
