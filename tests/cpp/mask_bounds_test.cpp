// A mask's bounds on one expression merged (codegen/c/mask_bounds.h): a padded convolution's four
// conditions on a window row become two, with the same value at every point; what is not an
// integer bound of an index expression, or whose bound divides, keeps its form and place.
#include "codegen/c/mask_bounds.h"

#include <gtest/gtest.h>

#include "symbolic/printer.h"
#include "symbolic/substitute.h"

namespace nt::codegen {
namespace {

bool all_hold(const std::vector<Expr>& conditions, const SymbolMap& values) {
  for (const Expr& c : conditions)
    if (!*evaluate_int(c, values)) return false;
  return true;
}

// The conjunctions agree for every value of the index variables and symbols in the ranges given.
void expect_same_value(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  for (int64_t i = -3; i <= 12; ++i)
    for (int64_t r = 0; r <= 2; ++r)
      for (int64_t pad = -2; pad <= 3; ++pad)
        for (int64_t size = 0; size <= 6; ++size) {
          SymbolMap v{
              {"i", int_const(i)}, {"r", int_const(r)}, {"pad", int_const(pad)}, {"H", int_const(size)}};
          EXPECT_EQ(all_hold(a, v), all_hold(b, v))
              << "i=" << i << " r=" << r << " pad=" << pad << " H=" << size;
        }
}

TEST(MaskBounds, APaddedWindowRowIsTestedOnceOnEachSide) {
  Expr h = add(var("i"), var("r")), pad = var("pad"), H = var("H");
  std::vector<Expr> conditions{lt(var("i"), 10), le(0, h), lt(h, add(H, mul(2, pad))), le(pad, h),
                               lt(h, add(H, pad))};
  std::vector<Expr> merged = merge_mask_bounds(conditions, {"i", "r"});
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_TRUE(merged[0].same_as(conditions[0]));  // a single bound on i keeps its form
  EXPECT_EQ(to_python(merged[1]), to_python(le(select(ge(0, pad), 0, pad), h)));
  EXPECT_EQ(to_python(merged[2]),
            to_python(lt(h, select(le(add(H, mul(2, pad)), add(H, pad)), add(H, mul(2, pad)), add(H, pad)))));
  expect_same_value(conditions, merged);
}

TEST(MaskBounds, InclusiveAndReversedComparisonsAreIntegerBounds) {
  Expr s = mul(var("i"), 2);
  // 1 < s, s >= pad, H >= s, s <= 9: s >= max(2, pad), s < min(H + 1, 10).
  std::vector<Expr> conditions{lt(1, s), ge(s, var("pad")), ge(var("H"), s), le(s, 9)};
  std::vector<Expr> merged = merge_mask_bounds(conditions, {"i"});
  ASSERT_EQ(merged.size(), 2u);
  expect_same_value(conditions, merged);
}

TEST(MaskBounds, OtherConditionsKeepTheirFormAndPlace) {
  Expr h = add(var("i"), var("r"));
  std::vector<Expr> conditions{
      le(0, h),
      le(floordiv(var("H"), var("pad")), h),  // a bound that divides (by pad, maybe 0)
      ne(h, 4),                               // not a bound
      lt(h, var("r")),                        // a bound that varies with the index
      lt(var("i"), var("H")),                 // another subject
      lt(var("pad"), var("H")),               // no index variable
  };
  std::vector<Expr> merged = merge_mask_bounds(conditions, {"i", "r"});
  ASSERT_EQ(merged.size(), conditions.size());
  for (size_t n = 0; n < conditions.size(); ++n) EXPECT_TRUE(merged[n].same_as(conditions[n])) << n;
  // Float comparisons are not integer bounds.
  std::vector<Expr> floats{le(float_const(0.5), var("i")), le(float_const(1.5), var("i"))};
  std::vector<Expr> kept = merge_mask_bounds(floats, {"i"});
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_TRUE(kept[0].same_as(floats[0]) && kept[1].same_as(floats[1]));
}

}  // namespace
}  // namespace nt::codegen
