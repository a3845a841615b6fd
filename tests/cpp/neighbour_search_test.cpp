#include "tune/neighbour_search.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>
#include <set>

namespace nt::tune {
namespace {

// A grid of block sizes 8..256 whose time falls towards `target` (the distance in doublings), the
// walk's timings counted.
struct Grid {
  Config target;
  std::set<Config> timed;
  std::vector<std::vector<Config>> rounds;

  double time(const Config& c) const {
    double steps = 0;
    for (const auto& [name, value] : c) {
      int64_t v = value, t = target.at(name);
      while (v < t) v *= 2, ++steps;
      while (v > t) v /= 2, ++steps;
    }
    return steps;
  }
  std::vector<Config> untimed_neighbours(const Config& c) const {
    std::vector<Config> near;
    for (const auto& [name, value] : c)
      for (int64_t next : {value * 2, value / 2}) {
        Config n = c;
        n[name] = next;
        if (next >= 8 && next <= 256 && !timed.count(n)) near.push_back(n);
      }
    return near;
  }
  Config time_all(const std::vector<Config>& configs) {
    rounds.push_back(configs);
    timed.insert(configs.begin(), configs.end());
    Config best;
    double fastest = std::numeric_limits<double>::infinity();
    for (const Config& c : timed)
      if (time(c) < fastest) fastest = time(c), best = c;
    return best;
  }
  Config walk(const Config& from, int rounds_allowed) {
    timed.insert(from);
    return walk_neighbours(
        from, rounds_allowed, [&](const Config& c) { return untimed_neighbours(c); },
        [&](const std::vector<Config>& configs) { return time_all(configs); });
  }
};

TEST(NeighbourSearch, WalksToAFasterConfigurationTwoStepsAway) {
  // The float16 matmul on Hopper: 128 x 128 sampled, 128 x 256 two rounds on (through 128 x 256
  // on its own: each round doubles or halves one size).
  Grid grid{{{"BM", 128}, {"BN", 256}, {"BK", 64}}};
  EXPECT_EQ(grid.walk({{"BM", 128}, {"BN", 64}, {"BK", 64}}, 3), grid.target);
  EXPECT_EQ(grid.rounds.size(), 3u);  // the third finds nothing faster and ends the walk
}

TEST(NeighbourSearch, StopsAfterItsRounds) {
  Grid grid{{{"BM", 256}, {"BN", 256}}};
  const Config end = grid.walk({{"BM", 8}, {"BN", 8}}, 3);
  EXPECT_EQ(grid.rounds.size(), 3u);
  EXPECT_EQ(grid.time(end), 10 - 3);  // three steps of ten
}

TEST(NeighbourSearch, StopsWhereNoNeighbourWins) {
  Grid grid{{{"BM", 32}, {"BN", 32}}};
  EXPECT_EQ(grid.walk({{"BM", 32}, {"BN", 32}}, 3), grid.target);
  ASSERT_EQ(grid.rounds.size(), 1u);  // one round of its four neighbours, none faster
  EXPECT_EQ(grid.rounds[0].size(), 4u);
}

TEST(NeighbourSearch, EndsWhereEveryNeighbourWasTimed) {
  Grid grid{{{"BM", 256}, {"BN", 8}}};
  const Config start{{"BM", 16}, {"BN", 64}};
  for (const Config& c : grid.untimed_neighbours(start)) grid.timed.insert(c);  // all timed already
  EXPECT_EQ(grid.walk(start, 3), start);
  EXPECT_TRUE(grid.rounds.empty());  // nothing left to time: no round
}

}  // namespace
}  // namespace nt::tune
