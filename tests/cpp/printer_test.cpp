// Printing as Python source: the text `ast.unparse` gives for the same tree
// (every expected string below was checked against Python 3.11's ast.unparse).
#include "symbolic/printer.h"

#include <gtest/gtest.h>

#include <limits>
#include <sstream>

namespace nt {
namespace {

class PrinterTest : public ::testing::Test {
 protected:
  Expr a = var("a"), b = var("b"), c = var("c"), d = var("d"), e = var("e"), x = var("x");
};

TEST_F(PrinterTest, Arithmetic) {
  EXPECT_EQ(to_python(sub(a, sub(b, c))), "a - (b - c)");
  EXPECT_EQ(to_python(sub(sub(a, b), c)), "a - b - c");
  EXPECT_EQ(to_python(add(a, add(b, c))), "a + (b + c)");
  EXPECT_EQ(to_python(add(add(a, b), c)), "a + b + c");
  EXPECT_EQ(to_python(mul(add(a, b), c)), "(a + b) * c");
  EXPECT_EQ(to_python(add(mul(a, b), c)), "a * b + c");
  EXPECT_EQ(to_python(add(a, mul(b, c))), "a + b * c");
  EXPECT_EQ(to_python(floordiv(a, mul(b, c))), "a // (b * c)");
  EXPECT_EQ(to_python(floordiv(mul(a, b), c)), "a * b // c");
  EXPECT_EQ(to_python(mod(add(a, b), sub(c, d))), "(a + b) % (c - d)");
  EXPECT_EQ(to_python(truediv(a, b)), "a / b");
  EXPECT_EQ(to_python(mul(a, truediv(b, c))), "a * (b / c)");
  EXPECT_EQ(to_python(add(floordiv(sub(add(a, b), 1), b), 1)), "(a + b - 1) // b + 1");
  EXPECT_EQ(to_python(sub(sub(a, sub(b, 1)), 1)), "a - (b - 1) - 1");
}

TEST_F(PrinterTest, Unary) {
  EXPECT_EQ(to_python(neg(add(a, b))), "-(a + b)");
  EXPECT_EQ(to_python(neg(a)), "-a");
  EXPECT_EQ(to_python(neg(neg(a))), "--a");
  EXPECT_EQ(to_python(neg(floordiv(x, 2))), "-(x // 2)");
  EXPECT_EQ(to_python(floordiv(neg(x), 2)), "-x // 2");
  EXPECT_EQ(to_python(neg(mul(2, a))), "-(2 * a)");
  EXPECT_EQ(to_python(sub(a, neg(b))), "a - -b");
  EXPECT_EQ(to_python(neg(lt(a, b))), "-(a < b)");
  EXPECT_EQ(to_python(neg(logical_not(a))), "-(not a)");
  EXPECT_EQ(to_python(logical_not(neg(a))), "not -a");
  EXPECT_EQ(to_python(logical_not(logical_not(a))), "not not a");
  EXPECT_EQ(to_python(neg(bool_const(true))), "-True");
}

TEST_F(PrinterTest, NegativeConstants) {
  EXPECT_EQ(to_python(int_const(-3)), "-3");
  EXPECT_EQ(to_python(mul(-2, x)), "-2 * x");
  EXPECT_EQ(to_python(mul(x, -1)), "x * -1");
  EXPECT_EQ(to_python(sub(x, -1)), "x - -1");
  EXPECT_EQ(to_python(add(a, -1)), "a + -1");
  EXPECT_EQ(to_python(sub(-1, a)), "-1 - a");
  EXPECT_EQ(to_python(floordiv(-1, a)), "-1 // a");
  EXPECT_EQ(to_python(floordiv(a, -2)), "a // -2");
  EXPECT_EQ(to_python(mod(x, -3)), "x % -3");
  EXPECT_EQ(to_python(float_const(-2.5)), "-2.5");
  EXPECT_EQ(to_python(mul(x, float_const(-2.5))), "x * -2.5");
  EXPECT_EQ(to_python(int_const(std::numeric_limits<int64_t>::min())), "-9223372036854775808");
}

TEST_F(PrinterTest, Comparisons) {
  EXPECT_EQ(to_python(lt(a, b)), "a < b");
  EXPECT_EQ(to_python(le(add(a, 1), mul(b, c))), "a + 1 <= b * c");
  EXPECT_EQ(to_python(lt(lt(a, b), c)), "(a < b) < c");
  EXPECT_EQ(to_python(lt(a, lt(b, c))), "a < (b < c)");
  EXPECT_EQ(to_python(eq(lt(a, b), c)), "(a < b) == c");
  EXPECT_EQ(to_python(eq(a, eq(b, c))), "a == (b == c)");
  EXPECT_EQ(to_python(ne(a, b)), "a != b");
  EXPECT_EQ(to_python(ge(a, b)), "a >= b");
  EXPECT_EQ(to_python(gt(a, b)), "a > b");
  EXPECT_EQ(to_python(lt(logical_not(a), b)), "(not a) < b");
}

TEST_F(PrinterTest, BooleanOperators) {
  EXPECT_EQ(to_python(logical_and(a, b)), "a and b");
  EXPECT_EQ(to_python(logical_and(logical_and(a, b), c)), "(a and b) and c");
  EXPECT_EQ(to_python(logical_and(a, logical_and(b, c))), "a and (b and c)");
  EXPECT_EQ(to_python(logical_or(a, logical_and(b, c))), "a or (b and c)");
  EXPECT_EQ(to_python(logical_and(logical_or(a, b), c)), "(a or b) and c");
  EXPECT_EQ(to_python(logical_and(logical_not(a), b)), "not a and b");
  EXPECT_EQ(to_python(logical_and(a, logical_not(b))), "a and (not b)");
  EXPECT_EQ(to_python(logical_or(a, logical_not(b))), "a or not b");
  EXPECT_EQ(to_python(logical_not(logical_and(a, b))), "not (a and b)");
  EXPECT_EQ(to_python(logical_not(eq(a, b))), "not a == b");
  EXPECT_EQ(to_python(logical_and(lt(a, b), lt(b, c))), "a < b and b < c");
  EXPECT_EQ(to_python(lt(logical_and(a, b), c)), "(a and b) < c");
}

TEST_F(PrinterTest, BitwiseOperators) {
  EXPECT_EQ(to_python(binary(BinaryOp::BitOr, a, binary(BinaryOp::BitAnd, b, c))), "a | b & c");
  EXPECT_EQ(to_python(binary(BinaryOp::BitAnd, binary(BinaryOp::BitOr, a, b), c)), "(a | b) & c");
  EXPECT_EQ(to_python(binary(BinaryOp::BitAnd, lt(a, b), c)), "(a < b) & c");
  EXPECT_EQ(to_python(lt(a, binary(BinaryOp::BitAnd, b, c))), "a < b & c");
  EXPECT_EQ(to_python(binary(BinaryOp::BitAnd, a, lt(b, c))), "a & (b < c)");
  EXPECT_EQ(to_python(binary(BinaryOp::BitAnd, lt(x, a), ge(x, 0))), "(x < a) & (x >= 0)");
}

TEST_F(PrinterTest, MinMaxAndSelect) {
  EXPECT_EQ(to_python(min(a, b)), "min(a, b)");
  EXPECT_EQ(to_python(max(add(a, b), c)), "max(a + b, c)");
  EXPECT_EQ(to_python(mul(min(a, b), c)), "min(a, b) * c");
  EXPECT_EQ(to_python(min(select(c, a, b), d)), "min(a if c else b, d)");
  EXPECT_EQ(to_python(select(c, a, b)), "a if c else b");
  EXPECT_EQ(to_python(select(c, add(a, b), d)), "a + b if c else d");
  EXPECT_EQ(to_python(add(select(c, a, b), 1)), "(a if c else b) + 1");
  EXPECT_EQ(to_python(select(c, a, select(d, b, e))), "a if c else b if d else e");
  EXPECT_EQ(to_python(select(d, select(c, a, b), e)), "(a if c else b) if d else e");
  EXPECT_EQ(to_python(select(select(c, b, d), a, e)), "a if (b if c else d) else e");
  EXPECT_EQ(to_python(select(logical_and(a, b), x, e)), "x if a and b else e");
}

TEST_F(PrinterTest, Constants) {
  EXPECT_EQ(to_python(int_const(0)), "0");
  EXPECT_EQ(to_python(bool_const(true)), "True");
  EXPECT_EQ(to_python(bool_const(false)), "False");
  EXPECT_EQ(to_python(add(bool_const(true), 1)), "True + 1");
  EXPECT_EQ(to_python(logical_and(bool_const(true), 1)), "True and 1");
  // Python's repr of floats.
  EXPECT_EQ(format_float(1.0), "1.0");
  EXPECT_EQ(format_float(1.5), "1.5");
  EXPECT_EQ(format_float(-2.5), "-2.5");
  EXPECT_EQ(format_float(1e16), "1e+16");
  EXPECT_EQ(format_float(1e15), "1000000000000000.0");
  EXPECT_EQ(format_float(0.0001), "0.0001");
  EXPECT_EQ(format_float(1e-05), "1e-05");
  EXPECT_EQ(format_float(123456789.125), "123456789.125");
  EXPECT_EQ(format_float(1e300), "1e+300");
  EXPECT_EQ(format_float(5e-324), "5e-324");
  EXPECT_EQ(format_float(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(format_float(1152921504606846976.0), "1.152921504606847e+18");
  EXPECT_EQ(format_float(std::numeric_limits<double>::infinity()), "float('inf')");
  EXPECT_EQ(format_float(-std::numeric_limits<double>::infinity()), "-float('inf')");
  EXPECT_EQ(format_float(std::numeric_limits<double>::quiet_NaN()), "float('nan')");
}

TEST_F(PrinterTest, TutorialShapes) {
  Expr m = var("BLOCK_SIZE_M"), n = var("BLOCK_SIZE_N");
  EXPECT_EQ(to_python(mul(m, n)), "BLOCK_SIZE_M * BLOCK_SIZE_N");
  // The outer size of a tile, as Tensor.tile builds it.
  Expr size = var("x_size_0"), tile = var("BLOCK_SIZE");
  Expr span = sub(sub(size, mul(1, sub(tile, 1))), 1);
  Expr outer = add(floordiv(sub(add(span, tile), 1), tile), 1);
  EXPECT_EQ(to_python(outer), "(x_size_0 - (BLOCK_SIZE - 1) - 1 + BLOCK_SIZE - 1) // BLOCK_SIZE + 1");
}

TEST_F(PrinterTest, StreamOperator) {
  std::ostringstream os;
  os << add(a, 1);
  EXPECT_EQ(os.str(), "a + 1");
}

}  // namespace
}  // namespace nt
