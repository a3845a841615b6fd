// The code-generation simplifier: what it reduces, and that it never changes
// a value (random expressions evaluated before and after at random points
// within the symbols' bounds).
#include "symbolic/simplify.h"

#include <gtest/gtest.h>

#include "symbolic/parser.h"
#include "symbolic/printer.h"
#include "symbolic/substitute.h"
#include "test_support.h"

namespace nt {
namespace {

using testing::BoundedVar;
using testing::eval_python;
using testing::Point;
using testing::RandomExprs;

// A symbol with bounds the simplifier assumes: its lower bound always, its upper bound on a meta
// symbol (elsewhere an upper bound is a hint, as upstream has it).
Expr bounded(const std::string& name, std::optional<int64_t> lo, std::optional<int64_t> hi) {
  SymbolAttrs attrs;
  attrs.lower_bound = lo;
  attrs.upper_bound = hi;
  attrs.meta = attrs.constexpr_ = hi.has_value();
  return var(name, attrs);
}

TEST(Simplify, UpperBoundsOfOtherThanMetaSymbolsAreHints) {
  SymbolAttrs attrs;
  attrs.constexpr_ = true;
  attrs.lower_bound = 1;
  attrs.upper_bound = 128;
  Expr n = var("N", attrs);
  EXPECT_EQ(bounds_of(n, {}), (Interval{1, std::nullopt}));
  EXPECT_EQ(to_python(simplify(lt(n, 129))), "N < 129");
  EXPECT_EQ(to_python(simplify(lt(bounded("M", 1, 128), 129))), "True");
}

std::string simplified(const Expr& e, const BoundsEnv& env = {}) { return to_python(simplify(e, env)); }
std::string simplified(const std::string& text, const BoundsEnv& env = {}) {
  return simplified(parse_python_expr(text), env);
}

TEST(Simplify, CanonicalSums) {
  EXPECT_EQ(simplified("N - (B - 1) - 1 + B - 1"), "N - 1");
  EXPECT_EQ(simplified("x - x"), "0");
  EXPECT_EQ(simplified("x + x"), "2 * x");
  EXPECT_EQ(simplified("b + a - b + a"), "2 * a");
  EXPECT_EQ(simplified("1 - a"), "-a + 1");
  EXPECT_EQ(simplified("-a - b"), "-a - b");
  EXPECT_EQ(simplified("(x + 3) - (3 + x)"), "0");
  EXPECT_EQ(simplified("x * 1 + 0 * y"), "x");
  // Sorted terms: the result does not depend on the order of the input.
  EXPECT_EQ(simplified("c + b + a"), simplified("a + (b + c)"));
  EXPECT_EQ(simplified("a * b - b * a"), "0");
}

TEST(Simplify, DistributesConstants) {
  EXPECT_EQ(simplified("2 * (a + 3)"), "2 * a + 6");
  EXPECT_EQ(simplified("(a - b) * 3 + 3 * b"), "3 * a");
  EXPECT_EQ(simplified("-(a - 1)"), "-a + 1");
  EXPECT_EQ(simplified("2 * (a * 3)"), "6 * a");
  // Non-constant factors stay factored, with the content taken out.
  EXPECT_EQ(simplified("(2 * a + 2) * b - 2 * ((a + 1) * b)"), "0");
  EXPECT_EQ(simplified("(a + 1) * b - b * (1 + a)"), "0");
}

TEST(Simplify, DivModOfKnownMultiples) {
  BoundsEnv env;
  env.set("j", 0, 7);
  EXPECT_EQ(simplified("(8 * i + j) // 8", env), "i");
  EXPECT_EQ(simplified("(8 * i + j) % 8", env), "j");
  EXPECT_EQ(simplified("(j + 8 * i + 16) // 8", env), "i + 2");
  EXPECT_EQ(simplified("(16 * i + 2 * j) // 16", env), "i");
  EXPECT_EQ(simplified("(16 * i + 2 * j) % 16", env), "2 * j");
  // The quotient of the multiples comes out even when the rest does not fold.
  EXPECT_EQ(simplified("(8 * i + k) // 8"), "i + k // 8");
  EXPECT_EQ(simplified("(8 * i + k) % 8"), "k % 8");
  EXPECT_EQ(simplified("(k + 17) % 8"), "(k + 1) % 8");
  // j may be 8: not in one period, so nothing folds.
  BoundsEnv wide;
  wide.set("j", 0, 8);
  EXPECT_EQ(simplified("(8 * i + j) // 8", wide), "i + j // 8");
  EXPECT_EQ(simplified("(8 * i + j) % 8", wide), "j % 8");
  // Negative rest within one period.
  BoundsEnv negative;
  negative.set("j", -8, -1);
  EXPECT_EQ(simplified("(8 * i + j) // 8", negative), "i - 1");
  EXPECT_EQ(simplified("(8 * i + j) % 8", negative), "j + 8");
}

TEST(Simplify, DivModNestedAndRecombined) {
  EXPECT_EQ(simplified("x // 4 // 2"), "x // 8");
  EXPECT_EQ(simplified("x % 16 % 8"), "x % 8");
  EXPECT_EQ(simplified("x // 8 * 8 + x % 8"), "x");
  EXPECT_EQ(simplified("3 * (x % 8) + 24 * (x // 8)"), "3 * x");
  EXPECT_EQ(simplified("x % 8 // 8"), "0");
  EXPECT_EQ(simplified("x % 8 % 8"), "x % 8");
  EXPECT_EQ(simplified("(2 * x + 4) // 2"), "x + 2");
  EXPECT_EQ(simplified("(6 * x + 4) % 4"), "2 * (x % 2)");
  Expr b = bounded("B", 1, std::nullopt);
  Expr x = var("x");
  EXPECT_EQ(to_python(simplify(add(mul(floordiv(x, b), b), mod(x, b)))), "x");
  EXPECT_EQ(to_python(simplify(floordiv(floordiv(x, b), 4))), "x // (4 * B)");
}

TEST(Simplify, DivModInRange) {
  BoundsEnv env;
  env.set("i", 0, 7);
  EXPECT_EQ(simplified("i // 8", env), "0");
  EXPECT_EQ(simplified("i % 8", env), "i");
  EXPECT_EQ(simplified("(i + 8) // 8", env), "1");
  EXPECT_EQ(simplified("(i + 8) % 8", env), "i");
  EXPECT_EQ(simplified("i // 7", env), "i // 7");
  EXPECT_EQ(simplified("x // 0"), "x // 0");  // left for evaluation to report
  EXPECT_EQ(simplified("x % 0"), "x % 0");
  EXPECT_EQ(simplified("x // -1"), "-x");
  EXPECT_EQ(simplified("x % 1"), "0");
}

TEST(Simplify, SymbolicDivisor) {
  Expr q = bounded("Q", 1, std::nullopt);
  // The tile formula's outer size with a tile as large as the dimension.
  Expr e = add(floordiv(sub(add(sub(sub(q, sub(q, 1)), 1), q), 1), q), 1);
  EXPECT_EQ(to_python(e), "(Q - (Q - 1) - 1 + Q - 1) // Q + 1");
  EXPECT_EQ(to_python(simplify(e)), "1");
  // The same bound given through the environment instead of the attributes.
  BoundsEnv env;
  env.set("Q", 1, std::nullopt);
  EXPECT_EQ(simplified("(Q - (Q - 1) - 1 + Q - 1) // Q + 1", env), "1");
  // Without a positive divisor nothing is assumed.
  EXPECT_EQ(simplified("(Q - (Q - 1) - 1 + Q - 1) // Q + 1"), "(Q - 1) // Q + 1");
  EXPECT_EQ(simplified("(Q * i + Q - 1) // Q", env), "i");
  EXPECT_EQ(simplified("(Q * i + k) // Q", env), "i + k // Q");
  EXPECT_EQ(simplified("(Q * i + k) % Q", env), "k % Q");
  env.set("r", 0, std::nullopt).set_symbolic("r", int_const(0), sub(var("Q"), 1));
  EXPECT_EQ(simplified("(Q * i + r) // Q", env), "i");
  EXPECT_EQ(simplified("(Q * i + r) % Q", env), "r");
  EXPECT_EQ(simplified("(2 * Q * i + 2 * r) // (2 * Q)", env), "i");
  EXPECT_EQ(simplified("(Q * i + r + 1) // Q", env), "(r + 1) // Q + i");  // terms in text order
  EXPECT_EQ(simplified("((Q + 1) * i) // (Q + 1)", env), "i");
  EXPECT_EQ(simplified("Q // Q", env), "1");
  EXPECT_EQ(simplified("Q % Q", env), "0");
  EXPECT_EQ(simplified("x % Q % Q", env), "x % Q");
  EXPECT_EQ(simplified("x % Q // Q", env), "0");
  // The quotient of a multiple of a sum is that sum, flattened.
  EXPECT_EQ(simplified("(x + 1) * Q // Q", env), "x + 1");
  EXPECT_EQ(simplified("(2 * B // Q + 1) * Q // Q", env), "2 * B // Q + 1");
}

TEST(Simplify, TileOuterSize) {
  // (size - dilation * (tile - 1) - 1 + stride - 1) // stride + 1 with dilation 1, stride = tile.
  EXPECT_EQ(simplified("(N - (B - 1) - 1 + B - 1) // B + 1"), "(N - 1) // B + 1");
  BoundsEnv env;
  env.set("N", 1, 64).set("B", 64, 64);
  EXPECT_EQ(simplified("(N - (B - 1) - 1 + B - 1) // B + 1", env), "1");
}

TEST(Simplify, SymbolicBounds) {
  // An element index of a block: 0 <= j <= B - 1.
  Expr b = bounded("B", 1, std::nullopt);
  BoundsEnv env;
  env.set("j", 0, std::nullopt);
  env.set_symbolic("j", int_const(0), sub(b, 1));
  Expr i = var("i"), j = var("j");
  EXPECT_EQ(to_python(simplify(floordiv(add(mul(i, b), j), b), env)), "i");
  EXPECT_EQ(to_python(simplify(mod(add(mul(i, b), j), b), env)), "j");
  EXPECT_EQ(to_python(simplify(lt(j, b), env)), "True");
  EXPECT_EQ(to_python(simplify(ge(j, b), env)), "False");
  EXPECT_EQ(to_python(simplify(min(j, b), env)), "j");
  EXPECT_EQ(prove(lt(add(j, 1), b), env), std::nullopt);
  EXPECT_EQ(prove(le(add(j, 1), b), env), true);
  // Symbolic bounds also give numeric ones: B <= 12 makes j <= 11.
  Expr b12 = bounded("B", 1, 12);
  BoundsEnv env12;
  env12.set_symbolic("j", int_const(0), sub(b12, 1));
  EXPECT_EQ(bounds_of(j, env12), (Interval{0, 11}));
  EXPECT_EQ(to_python(simplify(lt(j, 12), env12)), "True");
  // An index over a dimension of size 1 is 0.
  BoundsEnv single;
  single.set_symbolic("k", int_const(0), sub(bounded("S", 1, 1), 1));
  EXPECT_EQ(to_python(simplify(add(mul(var("k"), var("stride")), var("j")), single)), "j");
}

TEST(Simplify, SingleValuedSymbols) {
  BoundsEnv env;
  env.set("z", 3, 3);
  EXPECT_EQ(simplified("x * z + z", env), "3 * x + 3");
  EXPECT_EQ(simplified("z", env), "3");
  EXPECT_EQ(to_python(simplify(bounded("w", 5, 5))), "5");
}

TEST(Simplify, Comparisons) {
  BoundsEnv env;
  env.set("i", 0, 7).set("N", 1, std::nullopt);
  EXPECT_EQ(simplified("i < 8", env), "True");
  EXPECT_EQ(simplified("i >= 8", env), "False");
  EXPECT_EQ(simplified("i <= 7", env), "True");
  EXPECT_EQ(simplified("i > -1", env), "True");
  EXPECT_EQ(simplified("i == 9", env), "False");
  EXPECT_EQ(simplified("i != 9", env), "True");
  EXPECT_EQ(simplified("i < 4", env), "i < 4");
  EXPECT_EQ(simplified("0 <= i", env), "True");
  EXPECT_EQ(simplified("0 < N", env), "True");
  EXPECT_EQ(simplified("x + 1 < x + 2"), "True");
  EXPECT_EQ(simplified("x == x"), "True");
  EXPECT_EQ(simplified("x + 1 < y + 1"), "x < y");
  EXPECT_EQ(simplified("x - 1 < y"), "x < y + 1");
  // Float comparisons keep their form (NaN).
  EXPECT_EQ(simplified("x < 1.5"), "x < 1.5");
}

TEST(Simplify, MinMax) {
  BoundsEnv env;
  env.set("i", 0, 7);
  EXPECT_EQ(simplified("min(i, 8)", env), "i");
  EXPECT_EQ(simplified("max(i, 8)", env), "8");
  EXPECT_EQ(simplified("min(i, 0)", env), "0");
  EXPECT_EQ(simplified("max(i, -3)", env), "i");
  EXPECT_EQ(simplified("min(x, x + 1)"), "x");
  EXPECT_EQ(simplified("max(x, x + 1)"), "x + 1");
  EXPECT_EQ(simplified("min(x, x)"), "x");
  EXPECT_EQ(simplified("min(y, x)"), "min(x, y)");
  EXPECT_EQ(simplified("min(i, 4)", env), "min(4, i)");
}

TEST(Simplify, LogicAndSelect) {
  BoundsEnv env;
  env.set("i", 0, 7);
  EXPECT_EQ(simplified("i < 8 and x < y", env), "x < y");
  EXPECT_EQ(simplified("i > 8 and x < y", env), "False");
  EXPECT_EQ(simplified("i > 8 or x < y", env), "x < y");
  EXPECT_EQ(simplified("i < 8 or x < y", env), "True");
  EXPECT_EQ(simplified("x < y and True"), "x < y");
  EXPECT_EQ(simplified("x < y and False"), "False");
  EXPECT_EQ(simplified("x < y or False"), "x < y");
  EXPECT_EQ(simplified("x < y or True"), "True");
  EXPECT_EQ(simplified("not i < 8", env), "False");
  EXPECT_EQ(simplified("not x < y"), "x >= y");
  EXPECT_EQ(simplified("not not (x < y)"), "x < y");
  EXPECT_EQ(simplified("not 0"), "True");
  EXPECT_EQ(simplified("(i < 8) & (x < y)", env), "x < y");
  EXPECT_EQ(simplified("(i > 8) | (x < y)", env), "x < y");
  EXPECT_EQ(simplified("a if i < 8 else b", env), "a");
  EXPECT_EQ(simplified("a if i > 8 else b", env), "b");
  EXPECT_EQ(simplified("a if x < y else a"), "a");
  EXPECT_EQ(simplified("True if x < y else False"), "x < y");
  EXPECT_EQ(simplified("False if x < y else True"), "x >= y");
  // `5 and x` is x; `x and 5` is not 5 for an integer x.
  EXPECT_EQ(simplified("5 and x"), "x");
  EXPECT_EQ(simplified("x and 5"), "x and 5");
  EXPECT_EQ(simplified("0 or x"), "x");
}

TEST(Simplify, FloatsKeepTheirForm) {
  EXPECT_EQ(simplified("x / 2 + 1.5 - 1.5"), "x / 2 + 1.5 - 1.5");
  EXPECT_EQ(simplified("(x + 1 - 1) / 2"), "x / 2");
  EXPECT_EQ(simplified("min(x, 1.5)"), "min(x, 1.5)");
}

TEST(Simplify, OverflowLeavesTheExpression) {
  Expr x = var("x");
  Expr big = int_const(INT64_MAX);
  Expr e = add(add(x, big), big);  // the constants would sum beyond int64
  Expr s = simplify(e);
  EXPECT_EQ(to_python(s), to_python(e));
}

TEST(Simplify, DoesNotChangeItsInput) {
  Expr e = parse_python_expr("N - (B - 1) - 1 + B - 1");
  std::string before = to_python(e);
  simplify(e);
  EXPECT_EQ(to_python(e), before);
}

TEST(Prove, DecidesWhatBoundsShow) {
  BoundsEnv env;
  env.set("i", 0, 7).set("N", 1, std::nullopt);
  EXPECT_EQ(prove(parse_python_expr("i < 8"), env), true);
  EXPECT_EQ(prove(parse_python_expr("i >= 8"), env), false);
  EXPECT_EQ(prove(parse_python_expr("i < 7"), env), std::nullopt);
  EXPECT_EQ(prove(parse_python_expr("N - 1 >= 0"), env), true);
  EXPECT_EQ(prove(parse_python_expr("(N - 1) // N == 0"), env), true);
  EXPECT_EQ(prove(parse_python_expr("x < y")), std::nullopt);
  EXPECT_EQ(prove(parse_python_expr("N"), env), true);  // truthy: N >= 1
  EXPECT_EQ(prove(parse_python_expr("i - i"), env), false);
}

TEST(BoundsOf, IntervalArithmetic) {
  BoundsEnv env;
  env.set("i", 0, 7).set("j", -3, 5).set("N", 1, std::nullopt);
  auto b = [&](const std::string& text) { return bounds_of(parse_python_expr(text), env); };
  EXPECT_EQ(b("i + j"), (Interval{-3, 12}));
  EXPECT_EQ(b("i - j"), (Interval{-5, 10}));
  EXPECT_EQ(b("i * j"), (Interval{-21, 35}));
  EXPECT_EQ(b("-j"), (Interval{-5, 3}));
  EXPECT_EQ(b("i // 2"), (Interval{0, 3}));
  EXPECT_EQ(b("j // 2"), (Interval{-2, 2}));
  EXPECT_EQ(b("j // -2"), (Interval{-3, 1}));
  EXPECT_EQ(b("j % 4"), (Interval{0, 3}));
  EXPECT_EQ(b("i % 100"), (Interval{0, 7}));
  EXPECT_EQ(b("j % -4"), (Interval{-3, 0}));
  EXPECT_EQ(b("min(i, j)"), (Interval{-3, 5}));
  EXPECT_EQ(b("max(i, j)"), (Interval{0, 7}));
  EXPECT_EQ(b("i < 8"), (Interval{1, 1}));
  EXPECT_EQ(b("i < j"), (Interval{0, 1}));
  EXPECT_EQ(b("N"), (Interval{1, std::nullopt}));
  EXPECT_EQ(b("i // N"), (Interval{0, 7}));
  EXPECT_EQ(b("j // N"), (Interval{-3, 5}));
  EXPECT_EQ(b("i % N"), (Interval{0, 7}));
  EXPECT_EQ(b("x"), (Interval{}));
  EXPECT_EQ(b("x * 0"), (Interval{0, 0}));
  EXPECT_EQ(b("i & x"), (Interval{0, 7}));
  EXPECT_EQ(b("1.5"), (Interval{}));
  EXPECT_EQ(b("a if i < 8 else 100"), (Interval{}));
  EXPECT_EQ(b("3 if x else 100"), (Interval{3, 100}));
  // Attributes of the symbol count as bounds too, intersected with the environment.
  EXPECT_EQ(bounds_of(bounded("M", 2, 9)), (Interval{2, 9}));
  BoundsEnv narrow;
  narrow.set("M", 4, 20);
  EXPECT_EQ(bounds_of(bounded("M", 2, 9), narrow), (Interval{4, 9}));
  // Beyond int64: unbounded, never wrapped.
  EXPECT_EQ(b("N * 9223372036854775807").hi, std::nullopt);
}

// ---------------------------------------------------------------------------
// Random soundness.

struct RandomSetup {
  std::vector<BoundedVar> vars{{"i", 0, 7}, {"j", 0, 15}, {"k", -10, 10}, {"N", 1, 40}, {"B", 1, 9}};
  std::vector<Expr> exprs;
  BoundsEnv env;

  // Half of the symbols carry their bounds as attributes, half in the environment.
  RandomSetup() {
    for (size_t v = 0; v < vars.size(); ++v) {
      const auto& bv = vars[v];
      if (v % 2 == 0) {
        exprs.push_back(bounded(bv.name, bv.lo, bv.hi));
      } else {
        // Positive symbols keep their lower bound as an attribute so that the
        // generator can use them as divisors.
        exprs.push_back(bv.lo >= 1 ? bounded(bv.name, bv.lo, std::nullopt) : var(bv.name));
        env.set(bv.name, bv.lo, bv.hi);
      }
    }
  }

  Point point(RandomExprs& gen) const {
    Point p;
    for (const auto& bv : vars) {
      // Favour the ends of the ranges, where off-by-one errors live.
      int64_t value = gen.chance(0.3) ? (gen.chance(0.5) ? bv.lo : bv.hi) : gen.uniform(bv.lo, bv.hi);
      p[bv.name] = value;
    }
    return p;
  }
};

void check_sound(const Expr& e, const Expr& s, const std::vector<Point>& points, const char* what) {
  for (const auto& p : points) {
    auto before = eval_python(e, p);
    if (!before) continue;  // Python would raise here; nothing to compare
    auto after = eval_python(s, p);
    std::string where;
    for (const auto& [name, value] : p) where += name + "=" + std::to_string(value) + " ";
    ASSERT_TRUE(after.has_value()) << what << ": " << to_python(e) << "\n  -> " << to_python(s)
                                   << "\n  fails at " << where;
    ASSERT_EQ(*before, *after) << what << ": " << to_python(e) << "\n  -> " << to_python(s) << "\n  at "
                               << where;
  }
}

TEST(SimplifyRandom, KeepsValuesWithinBounds) {
  RandomSetup setup;
  RandomExprs gen(20240601, setup.exprs);
  int reduced = 0;
  const int kCases = 4000;
  for (int n = 0; n < kCases; ++n) {
    Expr e = gen.any(static_cast<int>(gen.uniform(1, 5)));
    Expr s = simplify(e, setup.env);
    std::vector<Point> points;
    for (int k = 0; k < 24; ++k) points.push_back(setup.point(gen));
    check_sound(e, s, points, "simplify");
    if (HasFatalFailure()) return;
    if (to_python(s).size() < to_python(e).size()) ++reduced;
  }
  // The simplifier does something on a good share of random trees.
  EXPECT_GT(reduced, kCases / 4);
}

TEST(SimplifyRandom, WithoutBoundsIsAnIdentity) {
  // No bounds at all: only identities apply. Symbols range over negatives too.
  std::vector<Expr> vars{var("a"), var("b"), var("c")};
  RandomExprs::Options options;
  options.symbolic_divisors = false;
  RandomExprs gen(7, vars, options);
  for (int n = 0; n < 3000; ++n) {
    Expr e = gen.any(static_cast<int>(gen.uniform(1, 5)));
    Expr s = simplify(e);
    std::vector<Point> points;
    for (int k = 0; k < 16; ++k) {
      points.push_back({{"a", gen.uniform(-50, 50)}, {"b", gen.uniform(-50, 50)}, {"c", gen.uniform(-3, 3)}});
    }
    check_sound(e, s, points, "simplify");
    if (HasFatalFailure()) return;
  }
}

TEST(SimplifyRandom, SymbolicBoundsAreSound) {
  // 0 <= j <= B - 1, 0 <= i <= N - 1: the element and program indices of a tile.
  Expr b = bounded("B", 1, 12);
  Expr n = bounded("N", 1, 30);
  Expr i = bounded("i", 0, std::nullopt);
  Expr j = bounded("j", 0, std::nullopt);
  BoundsEnv env;
  env.set_symbolic("j", int_const(0), sub(b, 1));
  env.set_symbolic("i", int_const(0), sub(n, 1));
  RandomExprs gen(99, {b, n, i, j, var("k")});
  for (int c = 0; c < 2000; ++c) {
    Expr e;
    switch (gen.uniform(0, 3)) {
      case 0:
        e = floordiv(add(mul(i, b), gen.integer(2)), b);
        break;
      case 1:
        e = mod(add(mul(gen.integer(1), b), gen.integer(2)), b);
        break;
      case 2:
        e = lt(gen.integer(3), gen.integer(3));
        break;
      default:
        e = gen.any(4);
        break;
    }
    Expr s = simplify(e, env);
    std::vector<Point> points;
    for (int k = 0; k < 16; ++k) {
      int64_t bv = gen.uniform(1, 12), nv = gen.uniform(1, 30);
      points.push_back({{"B", bv},
                        {"N", nv},
                        {"i", gen.uniform(0, nv - 1)},
                        {"j", gen.chance(0.3) ? bv - 1 : gen.uniform(0, bv - 1)},
                        {"k", gen.uniform(-20, 20)}});
    }
    check_sound(e, s, points, "simplify with symbolic bounds");
    if (HasFatalFailure()) return;
  }
}

TEST(SimplifyRandom, BoundsOfContainsEveryValue) {
  RandomSetup setup;
  RandomExprs gen(4242, setup.exprs);
  for (int n = 0; n < 3000; ++n) {
    Expr e = gen.any(static_cast<int>(gen.uniform(1, 5)));
    Interval before = bounds_of(e, setup.env);
    Interval after = bounds_of(simplify(e, setup.env), setup.env);
    for (int k = 0; k < 16; ++k) {
      Point p = setup.point(gen);
      auto value = eval_python(e, p);
      if (!value) continue;
      ASSERT_TRUE(before.contains(*value))
          << to_python(e) << " = " << *value << " outside [" << before.lo.value_or(-999999) << ", "
          << before.hi.value_or(999999) << "]";
      ASSERT_TRUE(after.contains(*value)) << to_python(simplify(e, setup.env)) << " = " << *value;
    }
  }
}

TEST(SimplifyRandom, ProveIsSound) {
  RandomSetup setup;
  RandomExprs gen(31337, setup.exprs);
  int decided = 0;
  for (int n = 0; n < 3000; ++n) {
    Expr e = gen.boolean(static_cast<int>(gen.uniform(1, 4)));
    std::optional<bool> proved = prove(e, setup.env);
    if (!proved) continue;
    ++decided;
    for (int k = 0; k < 16; ++k) {
      auto value = eval_python(e, setup.point(gen));
      if (!value) continue;
      ASSERT_EQ(*value != 0, *proved) << to_python(e);
    }
  }
  EXPECT_GT(decided, 100);
}

TEST(SimplifyRandom, DeterministicAndStable) {
  RandomSetup setup;
  RandomExprs gen(5, setup.exprs);
  for (int n = 0; n < 1000; ++n) {
    Expr e = gen.any(4);
    std::string once = to_python(simplify(e, setup.env));
    // A structurally equal copy (fresh nodes, the same symbols) gives the same text.
    SymbolMap same_symbols;
    for (const Expr& v : setup.exprs) same_symbols.emplace(v->name, v);
    Expr copy = substitute(parse_python_expr(to_python(e)), same_symbols);
    ASSERT_TRUE(equal(copy, e));
    EXPECT_EQ(to_python(simplify(copy, setup.env)), once) << to_python(e);
    // Simplifying again changes nothing.
    EXPECT_EQ(to_python(simplify(simplify(e, setup.env), setup.env)), once) << to_python(e);
  }
}

TEST(SimplifyRandom, CanonicalCasesAreReduced) {
  // Every `(c*x + y) // c` with 0 <= y < c reduces to x, for random c, x, y.
  RandomExprs gen(11, {var("x")});
  for (int n = 0; n < 500; ++n) {
    int64_t c = gen.uniform(1, 64);
    int64_t y_hi = gen.uniform(0, c - 1);
    BoundsEnv env;
    env.set("y", 0, y_hi);
    Expr x = var("x"), y = var("y");
    Expr dividend = add(mul(int_const(c), x), y);
    // (A symbol with a single value is that constant.)
    EXPECT_EQ(to_python(simplify(floordiv(dividend, c), env)), c == 1 && y_hi > 0 ? "x + y" : "x");
    EXPECT_EQ(to_python(simplify(mod(dividend, c), env)), c == 1 || y_hi == 0 ? "0" : "y");
  }
}

}  // namespace
}  // namespace nt
