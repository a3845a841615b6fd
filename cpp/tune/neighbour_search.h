// Tuning's neighbour rounds: a walk from the fastest sampled configuration to faster neighbours.
//
// In: the fastest configuration so far, a function naming a configuration's neighbours not yet
// timed, a function that times a list of configurations and returns the fastest of all timed so
// far, and a number of rounds. Out: the fastest configuration after the rounds. A round times the
// untimed neighbours of the fastest; another follows only where one of them won, so that a walk
// stops at a configuration faster than all of its neighbours or after `rounds` rounds.
#pragma once

#include <functional>
#include <vector>

#include "tune/config_space.h"

namespace nt::tune {

Config walk_neighbours(const Config& fastest, int rounds,
                       const std::function<std::vector<Config>(const Config&)>& untimed_neighbours,
                       const std::function<Config(const std::vector<Config>&)>& time_all);

}  // namespace nt::tune
