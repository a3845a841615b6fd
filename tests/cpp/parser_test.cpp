// Parsing Python expression text: precedence, errors, and the round trip
// parse(to_python(e)) == e over random trees.
#include "symbolic/parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "support/errors.h"
#include "symbolic/printer.h"
#include "test_support.h"

namespace nt {
namespace {

std::string reprint(const std::string& text) { return to_python(parse_python_expr(text)); }

TEST(Parser, Atoms) {
  EXPECT_TRUE(parse_python_expr("42").is_int(42));
  EXPECT_TRUE(parse_python_expr("1_000").is_int(1000));
  EXPECT_TRUE(parse_python_expr("  7  ").is_int(7));
  EXPECT_EQ(parse_python_expr("2.5")->float_value, 2.5);
  EXPECT_EQ(parse_python_expr("1e-05")->float_value, 1e-05);
  EXPECT_EQ(parse_python_expr("1e+16")->float_value, 1e16);
  EXPECT_EQ(parse_python_expr(".5")->float_value, 0.5);
  EXPECT_EQ(parse_python_expr("True")->kind, ExprKind::Bool);
  EXPECT_EQ(parse_python_expr("False")->int_value, 0);
  EXPECT_EQ(parse_python_expr("BLOCK_SIZE")->name, "BLOCK_SIZE");
  EXPECT_EQ(parse_python_expr("_x1")->name, "_x1");
  EXPECT_TRUE(std::isinf(parse_python_expr("float('inf')")->float_value));
  EXPECT_LT(parse_python_expr("-float('inf')")->float_value, 0);
  EXPECT_LT(parse_python_expr("float(\"-inf\")")->float_value, 0);
  EXPECT_TRUE(std::isnan(parse_python_expr("float('nan')")->float_value));
  EXPECT_TRUE(parse_python_expr("-5").is_int(-5));  // unary minus of a constant folds
  EXPECT_TRUE(parse_python_expr("+5").is_int(5));
  EXPECT_TRUE(parse_python_expr("2 * 3 + 1").is_int(7));
}

TEST(Parser, Precedence) {
  EXPECT_EQ(reprint("a - b - c"), "a - b - c");
  EXPECT_EQ(reprint("a - (b - c)"), "a - (b - c)");
  EXPECT_EQ(reprint("(a + b) * c"), "(a + b) * c");
  EXPECT_EQ(reprint("a + b * c"), "a + b * c");
  EXPECT_EQ(reprint("((a)) + (b)"), "a + b");
  EXPECT_EQ(reprint("a // (b * c)"), "a // (b * c)");
  EXPECT_EQ(reprint("a * b // c % d / e"), "a * b // c % d / e");
}

TEST(Parser, Operators) {
  Expr e = parse_python_expr("a < b and not c >= d or e != f");
  ASSERT_EQ(e->kind, ExprKind::Binary);
  EXPECT_EQ(e->binary_op, BinaryOp::Or);
  EXPECT_EQ(e->operands[0]->binary_op, BinaryOp::And);
  EXPECT_EQ(e->operands[0]->operands[1]->kind, ExprKind::Unary);
  EXPECT_EQ(e->operands[1]->binary_op, BinaryOp::Ne);
  EXPECT_EQ(parse_python_expr("a <= b")->binary_op, BinaryOp::Le);
  EXPECT_EQ(parse_python_expr("a == b")->binary_op, BinaryOp::Eq);
  EXPECT_EQ(parse_python_expr("a > b")->binary_op, BinaryOp::Gt);
  EXPECT_EQ(parse_python_expr("a | b & c")->binary_op, BinaryOp::BitOr);
  EXPECT_EQ(parse_python_expr("a & b")->binary_op, BinaryOp::BitAnd);
  EXPECT_EQ(parse_python_expr("a / b")->binary_op, BinaryOp::TrueDiv);
  EXPECT_EQ(parse_python_expr("a % b")->binary_op, BinaryOp::Mod);
  EXPECT_EQ(parse_python_expr("min(a, b + 1)")->binary_op, BinaryOp::Min);
  EXPECT_EQ(parse_python_expr("max( a , b )")->binary_op, BinaryOp::Max);
  Expr s = parse_python_expr("a if b else c if d else e");
  ASSERT_EQ(s->kind, ExprKind::Select);
  EXPECT_EQ(s->operands[2]->kind, ExprKind::Select);
  EXPECT_EQ(reprint("not not a"), "not not a");
  EXPECT_EQ(reprint("--a"), "--a");
  EXPECT_EQ(reprint("x if a and b else y"), "x if a and b else y");
  // Keywords must not run into names.
  EXPECT_EQ(parse_python_expr("android")->name, "android");
  EXPECT_EQ(parse_python_expr("a or ifx")->operands[1]->name, "ifx");
  EXPECT_EQ(parse_python_expr("notice")->name, "notice");
}

TEST(Parser, Errors) {
  for (const char* text : {"",          "a +",  "(a",     "a)",           "a b",
                           "a ** 2",    "f(x)", "min(a)", "min(a, b, c)", "a if b",
                           "lambda: 1", "x.y",  "a = 1",  "a[0]",         "99999999999999999999",
                           "1.2.3",     "'s'",  "not",    "a <> b",       "in"}) {
    EXPECT_THROW(parse_python_expr(text), ValueError) << "'" << text << "'";
  }
  try {
    parse_python_expr("a + $");
    FAIL() << "no error";
  } catch (const ValueError& error) {
    std::string message = error.what();
    EXPECT_NE(message.find("position 4"), std::string::npos) << message;
    EXPECT_NE(message.find("a + $"), std::string::npos) << message;
  }
}

// `-9223372036854775808` is what to_python prints for the smallest int64; the
// parser reads a negative literal whole, so it round-trips.
TEST(Parser, SmallestInt64RoundTrips) {
  Expr e = int_const(std::numeric_limits<int64_t>::min());
  EXPECT_TRUE(equal(parse_python_expr(to_python(e)), e));
}

// Python chains comparisons: `1 < 3 < 2` is `1 < 3 and 3 < 2`, False (not
// `(1 < 3) < 2`, which is `True < 2`, True).
TEST(Parser, ChainedComparisonsFollowPython) {
  Expr e = parse_python_expr("1 < 3 < 2");
  EXPECT_EQ(testing::eval_python(e, {}), 0);
}

// Python reads `5e-324` (the smallest subnormal double, which format_float
// prints); so does the parser.
TEST(Parser, SubnormalFloatsRoundTrip) {
  Expr e = float_const(5e-324);
  EXPECT_TRUE(equal(parse_python_expr(to_python(e)), e));
}

TEST(Parser, IsIdentifier) {
  EXPECT_TRUE(is_identifier("x"));
  EXPECT_TRUE(is_identifier("BLOCK_SIZE_M"));
  EXPECT_TRUE(is_identifier("_a1"));
  EXPECT_FALSE(is_identifier(""));
  EXPECT_FALSE(is_identifier("1a"));
  EXPECT_FALSE(is_identifier("a b"));
  EXPECT_FALSE(is_identifier("a+b"));
  EXPECT_FALSE(is_identifier("if"));
  EXPECT_FALSE(is_identifier("True"));
  EXPECT_FALSE(is_identifier("None"));
}

TEST(Parser, RoundTripsSpecialConstants) {
  for (double value : {0.5, -2.5, 1e16, 1e-05, 0.1 + 0.2, 1e300, 2.2250738585072014e-308, 123456789.125,
                       std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()}) {
    Expr e = mul(var("x"), float_const(value));
    EXPECT_TRUE(equal(parse_python_expr(to_python(e)), e)) << to_python(e);
  }
  for (int64_t value : {int64_t{0}, int64_t{-1}, std::numeric_limits<int64_t>::max(),
                        std::numeric_limits<int64_t>::min() + 1}) {
    Expr e = sub(var("x"), int_const(value));
    EXPECT_TRUE(equal(parse_python_expr(to_python(e)), e)) << to_python(e);
  }
}

TEST(Parser, RoundTripsRandomTrees) {
  testing::RandomExprs::Options options;
  options.floats = true;
  testing::RandomExprs gen(2718, {var("a"), var("b"), var("c"), var("BLOCK_SIZE")}, options);
  for (int n = 0; n < 5000; ++n) {
    Expr e = gen.any(static_cast<int>(gen.uniform(0, 6)));
    std::string text = to_python(e);
    Expr parsed = parse_python_expr(text);
    ASSERT_TRUE(equal(parsed, e)) << text << "\n  reparsed as " << to_python(parsed);
    ASSERT_EQ(to_python(parsed), text);
  }
}

}  // namespace
}  // namespace nt
