// BatchProgram: batched evaluation agrees with a scalar evaluation of the
// same expressions (Python semantics), and reports what it cannot evaluate.
#include "symbolic/batch_eval.h"

#include <gtest/gtest.h>

#include "support/errors.h"
#include "symbolic/printer.h"
#include "test_support.h"

namespace nt {
namespace {

using testing::eval_python;
using testing::Point;

// Runs `program` over `points` (each a value per input, in input order).
std::vector<std::vector<int64_t>> run(const BatchProgram& program, size_t num_outputs,
                                      const std::vector<std::vector<int64_t>>& columns, size_t n) {
  std::vector<const int64_t*> inputs;
  for (const auto& column : columns) inputs.push_back(column.data());
  std::vector<std::vector<int64_t>> outputs(num_outputs, std::vector<int64_t>(n));
  std::vector<int64_t*> output_ptrs;
  for (auto& output : outputs) output_ptrs.push_back(output.data());
  program.run(inputs.data(), n, output_ptrs.data());
  return outputs;
}

TEST(BatchEval, AgreesWithScalarEvaluation) {
  SymbolAttrs positive;
  positive.lower_bound = 1;
  std::vector<Expr> vars{var("a"), var("b"), var("P", positive), var("Q", positive)};
  testing::RandomExprs gen(1234, vars);
  size_t compared = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<Expr> outputs;
    size_t count = static_cast<size_t>(gen.uniform(1, 3));
    for (size_t k = 0; k < count; ++k) outputs.push_back(gen.any(static_cast<int>(gen.uniform(0, 6))));
    BatchProgram program(vars, outputs);
    size_t n = trial % 3 == 0 ? BatchProgram::kMaxBatch : static_cast<size_t>(gen.uniform(1, 300));
    std::vector<std::vector<int64_t>> columns(vars.size(), std::vector<int64_t>(n));
    for (size_t p = 0; p < n; ++p) {
      columns[0][p] = gen.uniform(-100, 100);
      columns[1][p] = gen.uniform(-5, 5);
      columns[2][p] = gen.uniform(1, 20);  // divisors stay nonzero
      columns[3][p] = gen.uniform(1, 3);
    }
    auto results = run(program, outputs.size(), columns, n);
    for (size_t p = 0; p < n; ++p) {
      Point point{{"a", columns[0][p]}, {"b", columns[1][p]}, {"P", columns[2][p]}, {"Q", columns[3][p]}};
      for (size_t k = 0; k < outputs.size(); ++k) {
        auto expected = eval_python(outputs[k], point);
        if (!expected) continue;  // beyond int64: the batch wraps
        ASSERT_EQ(results[k][p], *expected)
            << to_python(outputs[k]) << " at a=" << columns[0][p] << " b=" << columns[1][p]
            << " P=" << columns[2][p] << " Q=" << columns[3][p];
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 100000u);
}

TEST(BatchEval, PythonSemantics) {
  Expr a = var("a"), b = var("b");
  std::vector<Expr> outputs{floordiv(a, b), mod(a, b), logical_and(a, b), logical_or(a, b),
                            logical_not(a), min(a, b), max(a, b),         select(lt(a, b), a, b)};
  BatchProgram program({a, b}, outputs);
  std::vector<std::vector<int64_t>> columns{{-7, 7, 0, 3}, {2, -2, 5, 0}};
  // The zero divisor of the last point would raise: evaluate the first three.
  auto r = run(program, outputs.size(), columns, 3);
  EXPECT_EQ(r[0], (std::vector<int64_t>{-4, -4, 0}));
  EXPECT_EQ(r[1], (std::vector<int64_t>{1, -1, 0}));
  EXPECT_EQ(r[2], (std::vector<int64_t>{2, -2, 0}));  // `a and b`: a if a is falsy, else b
  EXPECT_EQ(r[3], (std::vector<int64_t>{-7, 7, 5}));  // `a or b`: a if a is truthy, else b
  EXPECT_EQ(r[4], (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(r[5], (std::vector<int64_t>{-7, -2, 0}));
  EXPECT_EQ(r[6], (std::vector<int64_t>{2, 7, 5}));
  EXPECT_EQ(r[7], (std::vector<int64_t>{-7, -2, 0}));
}

TEST(BatchEval, SharesTheDag) {
  Expr x = var("x");
  Expr shared = add(mul(x, 3), 1);
  Expr e = mul(shared, shared);
  BatchProgram program({x}, {e, shared});
  // x, 3, x*3, 1, +, * : each node once.
  EXPECT_EQ(program.num_instructions(), 6u);
  auto r = run(program, 2, {{2, -1}}, 2);
  EXPECT_EQ(r[0], (std::vector<int64_t>{49, 4}));
  EXPECT_EQ(r[1], (std::vector<int64_t>{7, -2}));
}

TEST(BatchEval, ConstantsWithoutInputs) {
  BatchProgram program({}, {int_const(5), bool_const(true)});
  auto r = run(program, 2, {}, 4);
  EXPECT_EQ(r[0], (std::vector<int64_t>{5, 5, 5, 5}));
  EXPECT_EQ(r[1], (std::vector<int64_t>{1, 1, 1, 1}));
}

TEST(BatchEval, Errors) {
  Expr x = var("x"), y = var("y");
  BatchProgram division({x, y}, {floordiv(x, y)});
  EXPECT_THROW(run(division, 1, {{1, 2}, {1, 0}}, 2), ZeroDivisionError);
  BatchProgram modulo({x, y}, {mod(x, y)});
  EXPECT_THROW(run(modulo, 1, {{1}, {0}}, 1), ZeroDivisionError);
  BatchProgram constant_division({}, {floordiv(3, 0)});
  EXPECT_THROW(run(constant_division, 1, {}, 1), ZeroDivisionError);
  EXPECT_THROW(BatchProgram({x}, {add(x, y)}), ValueError);  // y has no value
  EXPECT_THROW(BatchProgram({x}, {truediv(x, 2)}), ValueError);
  EXPECT_THROW(BatchProgram({x}, {add(x, float_const(1.5))}), ValueError);
}

// Python evaluates `if`-`else`, `and` and `or` lazily: `x // y if y != 0 else 0`
// is 0 where y is 0. BatchProgram computes both branches but raises only for a
// division by zero that the chosen branch depends on.
TEST(BatchEval, SelectGuardsADivision) {
  Expr x = var("x"), y = var("y");
  BatchProgram program({x, y}, {select(ne(y, 0), floordiv(x, y), 0)});
  auto r = run(program, 1, {{7, 7}, {2, 0}}, 2);
  EXPECT_EQ(r[0], (std::vector<int64_t>{3, 0}));
}

}  // namespace
}  // namespace nt
