// Expr construction: node shapes, integer folding, the printing identities,
// overflow, Python's floor division, structural equality and substitution.
#include "symbolic/expr.h"

#include <gtest/gtest.h>

#include <limits>

#include "support/errors.h"
#include "symbolic/printer.h"
#include "symbolic/substitute.h"

namespace nt {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(Expr, Leaves) {
  Expr i = int_const(42);
  EXPECT_EQ(i->kind, ExprKind::Int);
  EXPECT_TRUE(i.is_int());
  EXPECT_TRUE(i.is_int(42));
  EXPECT_FALSE(i.is_int(41));
  EXPECT_TRUE(i.is_const());
  EXPECT_EQ(i.as_int(), 42);

  Expr f = float_const(1.5);
  EXPECT_EQ(f->kind, ExprKind::Float);
  EXPECT_TRUE(f.is_const());
  EXPECT_FALSE(f.is_int());
  EXPECT_EQ(f.as_int(), std::nullopt);

  Expr b = bool_const(true);
  EXPECT_EQ(b->kind, ExprKind::Bool);
  EXPECT_EQ(b->int_value, 1);
  EXPECT_FALSE(b.is_int());  // a bool is not an integer constant

  SymbolAttrs attrs;
  attrs.constexpr_ = true;
  attrs.meta = true;
  attrs.lower_bound = 32;
  attrs.upper_bound = 1024;
  attrs.power_of_two = true;
  Expr v = var("BLOCK_SIZE", attrs);
  EXPECT_TRUE(v.is_var());
  EXPECT_EQ(v->name, "BLOCK_SIZE");
  EXPECT_TRUE(v->attrs.meta);
  EXPECT_EQ(v->attrs.lower_bound, 32);
  EXPECT_EQ(v->attrs.upper_bound, 1024);
  EXPECT_TRUE(v->attrs.power_of_two);
  EXPECT_THROW(var(""), ValueError);

  Expr implicit = 7;
  EXPECT_TRUE(implicit.is_int(7));
  EXPECT_FALSE(Expr().defined());
}

TEST(Expr, OperationNodes) {
  Expr x = var("x"), y = var("y");
  Expr s = add(x, y);
  EXPECT_EQ(s->kind, ExprKind::Binary);
  EXPECT_EQ(s->binary_op, BinaryOp::Add);
  ASSERT_EQ(s->operands.size(), 2u);
  EXPECT_TRUE(s->operands[0].same_as(x));
  EXPECT_TRUE(s->operands[1].same_as(y));

  Expr n = neg(x);
  EXPECT_EQ(n->kind, ExprKind::Unary);
  EXPECT_EQ(n->unary_op, UnaryOp::Neg);

  Expr c = select(lt(x, y), x, y);
  EXPECT_EQ(c->kind, ExprKind::Select);
  ASSERT_EQ(c->operands.size(), 3u);

  EXPECT_TRUE(is_comparison(BinaryOp::Lt));
  EXPECT_TRUE(is_comparison(BinaryOp::Ne));
  EXPECT_FALSE(is_comparison(BinaryOp::And));
  EXPECT_FALSE(is_comparison(BinaryOp::Min));
  EXPECT_STREQ(binary_op_token(BinaryOp::FloorDiv), "//");
  EXPECT_STREQ(binary_op_token(BinaryOp::And), "and");
  EXPECT_STREQ(binary_op_token(BinaryOp::BitOr), "|");
  EXPECT_STREQ(binary_op_token(BinaryOp::Max), "max");
}

TEST(Expr, IntegerFolding) {
  EXPECT_TRUE(add(2, 3).is_int(5));
  EXPECT_TRUE(sub(2, 3).is_int(-1));
  EXPECT_TRUE(mul(-4, 3).is_int(-12));
  EXPECT_TRUE(floordiv(7, 2).is_int(3));
  EXPECT_TRUE(floordiv(-7, 2).is_int(-4));
  EXPECT_TRUE(mod(-7, 2).is_int(1));
  EXPECT_TRUE(mod(7, -2).is_int(-1));
  EXPECT_TRUE(min(3, -3).is_int(-3));
  EXPECT_TRUE(max(3, -3).is_int(3));
  EXPECT_TRUE(binary(BinaryOp::BitAnd, 12, 10).is_int(8));
  EXPECT_TRUE(binary(BinaryOp::BitOr, 12, 10).is_int(14));
  EXPECT_TRUE(neg(5).is_int(-5));
  EXPECT_EQ(neg(float_const(2.5))->float_value, -2.5);
  // Comparisons of integers fold to booleans.
  Expr t = lt(1, 2);
  EXPECT_EQ(t->kind, ExprKind::Bool);
  EXPECT_EQ(t->int_value, 1);
  EXPECT_EQ(ge(1, 2)->int_value, 0);
  EXPECT_EQ(eq(2, 2)->int_value, 1);
  EXPECT_EQ(ne(2, 2)->int_value, 0);
  EXPECT_EQ(le(2, 2)->int_value, 1);
  EXPECT_EQ(gt(3, 2)->int_value, 1);
  EXPECT_EQ(logical_not(bool_const(true))->int_value, 0);
  // Constants met one at a time, as built.
  Expr x = var("x");
  EXPECT_TRUE(add(mul(2, 3), sub(10, 4)).is_int(12));
  EXPECT_EQ(to_python(add(add(x, 1), 2)), "x + 1 + 2");  // no reassociation at construction
}

TEST(Expr, NotFolded) {
  // Division by zero is left for evaluation to report.
  Expr d = floordiv(1, 0);
  EXPECT_EQ(d->kind, ExprKind::Binary);
  EXPECT_EQ(mod(1, 0)->kind, ExprKind::Binary);
  // True division, `and`/`or` and floats keep their form.
  EXPECT_EQ(truediv(6, 3)->kind, ExprKind::Binary);
  EXPECT_EQ(logical_and(1, 2)->kind, ExprKind::Binary);
  EXPECT_EQ(logical_or(0, 2)->kind, ExprKind::Binary);
  EXPECT_EQ(add(float_const(1.0), 2)->kind, ExprKind::Binary);
  EXPECT_EQ(add(bool_const(true), 1)->kind, ExprKind::Binary);
  EXPECT_EQ(logical_not(0)->kind, ExprKind::Unary);
}

TEST(Expr, Identities) {
  Expr x = var("x");
  EXPECT_TRUE(add(x, 0).same_as(x));
  EXPECT_TRUE(add(0, x).same_as(x));
  EXPECT_TRUE(sub(x, 0).same_as(x));
  EXPECT_EQ(to_python(sub(0, x)), "-x");
  EXPECT_TRUE(mul(x, 1).same_as(x));
  EXPECT_TRUE(mul(1, x).same_as(x));
  EXPECT_TRUE(floordiv(x, 1).same_as(x));
  // Only those: the rest is the simplifier's business.
  EXPECT_EQ(to_python(mul(x, 0)), "x * 0");
  EXPECT_EQ(to_python(sub(x, x)), "x - x");
  EXPECT_EQ(to_python(mod(x, 1)), "x % 1");
  EXPECT_EQ(to_python(floordiv(1, x)), "1 // x");
  EXPECT_EQ(to_python(floordiv(x, -1)), "x // -1");
  EXPECT_EQ(to_python(select(bool_const(true), x, 1)), "x");
  EXPECT_EQ(to_python(select(bool_const(false), x, 1)), "1");
  EXPECT_EQ(to_python(select(lt(x, 1), x, 1)), "x if x < 1 else 1");
}

TEST(Expr, OverflowThrows) {
  EXPECT_THROW(add(kMax, 1), std::overflow_error);
  EXPECT_THROW(sub(kMin, 1), std::overflow_error);
  EXPECT_THROW(mul(kMax, 2), std::overflow_error);
  EXPECT_THROW(mul(kMin, -1), std::overflow_error);
  EXPECT_TRUE(add(kMax, 0).is_int(kMax));
  EXPECT_TRUE(sub(kMin, -1).is_int(kMin + 1));
  EXPECT_TRUE(mul(kMin, 1).is_int(kMin));
  EXPECT_TRUE(floordiv(kMin, 2).is_int(kMin / 2));
}

// Python's results: -(-2**63) and -2**63 // -1 are 2**63, which does not fit
// in 64 bits (std::overflow_error, never a trap); -2**63 % -1 is 0.
TEST(Expr, NegatingTheMinimumThrows) { EXPECT_THROW(neg(kMin), std::overflow_error); }
TEST(Expr, FloorDivOfMinimumByMinusOneThrows) { EXPECT_THROW(floordiv(kMin, -1), std::overflow_error); }
TEST(Expr, ModOfMinimumByMinusOneIsZero) { EXPECT_TRUE(mod(kMin, -1).is_int(0)); }

TEST(Expr, PythonFloorDivision) {
  struct Case {
    int64_t a, b, q, r;
  };
  // The values Python gives for a // b and a % b.
  const Case cases[] = {
      {7, 2, 3, 1},       {-7, 2, -4, 1},     {7, -2, -4, -1},        {-7, -2, 3, -1},
      {6, 3, 2, 0},       {-6, 3, -2, 0},     {0, 5, 0, 0},           {0, -5, 0, 0},
      {1, 7, 0, 1},       {-1, 7, -1, 6},     {1, -7, -1, -6},        {-1, -7, 0, -1},
      {kMax, 1, kMax, 0}, {kMin, 1, kMin, 0}, {kMin, 2, kMin / 2, 0}, {kMin + 1, -2, kMax / 2, -1}};
  for (const auto& c : cases) {
    EXPECT_EQ(floor_div(c.a, c.b), c.q) << c.a << " // " << c.b;
    EXPECT_EQ(floor_mod(c.a, c.b), c.r) << c.a << " % " << c.b;
    EXPECT_EQ(floor_div(c.a, c.b) * c.b + floor_mod(c.a, c.b), c.a);
  }
  EXPECT_THROW(floor_div(1, 0), ZeroDivisionError);
  EXPECT_THROW(floor_mod(1, 0), ZeroDivisionError);
}

TEST(Expr, StructuralEquality) {
  Expr a = add(var("x"), mul(var("y"), 2));
  Expr b = add(var("x"), mul(var("y"), 2));
  EXPECT_FALSE(a.same_as(b));
  EXPECT_TRUE(equal(a, b));
  EXPECT_EQ(structural_hash(a), structural_hash(b));
  EXPECT_FALSE(equal(a, add(var("x"), mul(var("y"), 3))));
  EXPECT_FALSE(equal(a, sub(var("x"), mul(var("y"), 2))));
  EXPECT_FALSE(equal(int_const(1), bool_const(true)));
  EXPECT_FALSE(equal(int_const(1), float_const(1.0)));
  // Symbols are equal by name, whatever their attributes.
  SymbolAttrs attrs;
  attrs.lower_bound = 1;
  EXPECT_TRUE(equal(var("n", attrs), var("n")));
  EXPECT_FALSE(equal(var("n"), var("m")));
  EXPECT_FALSE(equal(neg(var("x")), logical_not(var("x"))));
  EXPECT_FALSE(equal(select(var("c"), 1, 2), select(var("c"), 2, 1)));
}

TEST(Substitute, ReplacesAndFolds) {
  Expr x = var("x"), y = var("y");
  Expr e = add(mul(x, 4), floordiv(y, 2));
  EXPECT_TRUE(substitute(e, {{"x", int_const(3)}, {"y", int_const(9)}}).is_int(16));
  EXPECT_EQ(to_python(substitute(e, {{"x", var("z")}})), "z * 4 + y // 2");
  EXPECT_TRUE(substitute(e, {}).same_as(e));
  EXPECT_TRUE(substitute(e, {{"w", int_const(1)}}).same_as(e));  // nothing to replace: same node
  // Identities apply as the tree is rebuilt.
  EXPECT_EQ(to_python(substitute(e, {{"x", int_const(0)}})), "y // 2");
  EXPECT_EQ(substitute(lt(x, y), {{"x", int_const(1)}, {"y", int_const(2)}})->kind, ExprKind::Bool);
  // Shared sub-trees are rebuilt once and stay shared.
  Expr shared = add(x, 1);
  Expr twice = mul(shared, shared);
  Expr replaced = substitute(twice, {{"x", var("z")}});
  EXPECT_TRUE(replaced->operands[0].same_as(replaced->operands[1]));
}

TEST(Substitute, CollectVars) {
  Expr e = add(mul(var("b"), var("a")), sub(var("b"), var("c")));
  std::vector<Expr> vars = collect_vars(e);
  ASSERT_EQ(vars.size(), 3u);
  EXPECT_EQ(vars[0]->name, "b");
  EXPECT_EQ(vars[1]->name, "a");
  EXPECT_EQ(vars[2]->name, "c");
  EXPECT_TRUE(collect_vars(int_const(3)).empty());
}

TEST(Substitute, WithOperands) {
  Expr e = sub(var("x"), var("y"));
  EXPECT_TRUE(with_operands(e, {int_const(5), int_const(2)}).is_int(3));
  Expr leaf = var("x");
  EXPECT_TRUE(with_operands(leaf, {}).same_as(leaf));
}

}  // namespace
}  // namespace nt
