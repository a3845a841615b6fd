#include "tune/neighbour_search.h"

namespace nt::tune {

Config walk_neighbours(const Config& fastest, int rounds,
                       const std::function<std::vector<Config>(const Config&)>& untimed_neighbours,
                       const std::function<Config(const std::vector<Config>&)>& time_all) {
  Config best = fastest;
  for (int round = 0; round < rounds; ++round) {
    const std::vector<Config> near = untimed_neighbours(best);
    if (near.empty()) break;
    Config next = time_all(near);
    if (next == best) break;  // none of them won
    best = std::move(next);
  }
  return best;
}

}  // namespace nt::tune
