// Evaluation of integer expressions over many points at once.
//
// In: the input symbols and the output Exprs (integer or boolean valued; every
// symbol they use must be an input). Out: a BatchProgram, the expressions'
// shared DAG flattened into a list of instructions, each computed over a whole
// batch of points before the next, so evaluating an index map of a million
// elements takes milliseconds. Semantics are Python's (`//` and `%` round
// toward negative infinity; booleans are 0/1). Division by zero raises
// ZeroDivisionError.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "symbolic/expr.h"

namespace nt {

class BatchProgram {
 public:
  BatchProgram(const std::vector<Expr>& inputs, const std::vector<Expr>& outputs);

  static constexpr size_t kMaxBatch = 1024;

  // inputs[k][p] is input k at point p (p < n <= kMaxBatch); writes outputs[k][p].
  void run(const int64_t* const* inputs, size_t n, int64_t* const* outputs) const;

  size_t num_instructions() const { return code_.size(); }

 private:
  enum class Op { Const, Input, Neg, Not, Binary, Select };
  struct Instruction {
    Op op;
    BinaryOp binary_op{};
    int64_t constant = 0;  // Const value, Input position
    int a = -1, b = -1, c = -1;
    bool may_poison = false;  // can depend on a division by zero
  };

  int emit(const Expr& e);
  template <typename Slot, typename Poisoned>
  void propagate_poison(const Instruction& instruction, size_t n, Slot slot, Poisoned poisoned,
                        uint8_t* out_poison) const;

  std::vector<Instruction> code_;
  std::vector<int> output_slots_;
  std::vector<Expr> inputs_;
  std::unordered_map<const ExprNode*, int> memo_;
};

}  // namespace nt
