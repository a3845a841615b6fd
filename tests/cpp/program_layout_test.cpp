// ProgramLayout::next_program(): the program symbols' values for program nt_pid_flat + 1,
// evaluated for every program of grids of one to three dimensions (symbolic sizes given
// values), against the row-major digits of the next flat id computed here.
#include <gtest/gtest.h>

#include "lower/program_layout.h"
#include "symbolic/substitute.h"

namespace nt {
namespace {

void check_next_program(const std::vector<int64_t>& sizes) {
  std::vector<Expr> shape;
  SymbolMap values;
  for (size_t d = 0; d < sizes.size(); ++d) {
    std::string name = "grid_" + std::to_string(d);
    shape.push_back(var(name));
    values[name] = Expr(sizes[d]);
  }
  lower::ProgramLayout layout(shape);
  const auto next = layout.next_program();
  ASSERT_EQ(next.size(), sizes.size() + 1);
  int64_t count = 1;
  for (int64_t s : sizes) count *= s;
  for (int64_t flat = 0; flat + 1 < count; ++flat) {
    values["nt_pid_flat"] = Expr(flat);
    std::vector<int64_t> digits(sizes.size());
    int64_t rest = flat + 1;
    for (size_t d = sizes.size(); d-- > 0;) {
      digits[d] = d == 0 ? rest : rest % sizes[d];
      rest /= sizes[d];
    }
    for (const auto& [symbol, value] : next) {
      auto got = evaluate_int(value, values);
      ASSERT_TRUE(got.has_value()) << symbol;
      if (symbol == "nt_pid_flat") {
        EXPECT_EQ(*got, flat + 1);
      } else {
        size_t d = std::stoul(symbol.substr(7));  // nt_pid_<d>
        EXPECT_EQ(*got, digits[d]) << symbol << " after program " << flat;
      }
    }
  }
}

TEST(ProgramLayout, NextProgramOfOneDimension) { check_next_program({7}); }

TEST(ProgramLayout, NextProgramCarriesAcrossDigits) {
  check_next_program({3, 5});
  check_next_program({2, 3, 4});
  check_next_program({4, 1, 3});
}

}  // namespace
}  // namespace nt
